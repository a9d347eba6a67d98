import type { ConfirmChannel } from 'amqplib';
import { amqplibTextFailure } from '../amqp/amqplib-text.js';
import { connectFromConfig } from '../amqp/connect-from-config.js';
import { type Config, topologyOptionsFromConfig } from '../config/config.js';
import { readParkedDepth } from '../amqp/parked-depth.js';
import { DeliveryLedger } from './delivery-ledger.js';
import { consumeUntilDone } from './pull-loop.js';
import { BrokerConnectionError, isNamedError, type PublishError } from '../errors.js';
import { PullAbortedError } from '../core/pull-aborted-error.js';
import type { PullOptions } from '../core/pull-options.js';
import { TopologyDriftError } from '../core/topology-drift-error.js';
import type { Summary } from '../observability/summary.js';
import { invocationDeadlines } from '../core/deadlines.js';
import { Tally } from '../core/tally.js';
import { parseBrokerVersion } from '../core/mode-settings.js';
import { brokerVersionOf } from '../topology/broker-ops.js';
import { DRIFT_REMEDY, forgetDelayPathMarker } from '../copy/delay-path-check.js';
import { brokerPauseMarker } from '../amqp/broker-pause-marker.js';
import { PauseMarking, pausedSummary, readPause } from '../core/pause-marking.js';

/**
 * One invocation of the scheduled pull function: connect, consume the work queue with a short-lived
 * consumer (prefetch = BATCH_SIZE) until it is idle, MAX_MESSAGES were taken or the budget nears its
 * end, run the handler on each delivery with bounded concurrency, and ack, retry or park each one.
 * The circuit breaker starts half-open (one message at a time until a success); when it opens, the
 * invocation stops calling the handler and defers what it holds. A partner's "slow down" (a handler's
 * error or a rule with `pauseQueue`) does the same for the pause's time, and marks the queue paused on
 * the broker: an invocation that finds the mark takes nothing. Whatever is not settled by the end
 * goes back to the queue, and the connection is always closed.
 */
async function runPull(options: PullOptions): Promise<Summary> {
  const { config, log } = options;
  const startedAt = Date.now();
  const { stopTakingAt, hardStopAt, settleBy } = invocationDeadlines(config.safetyMarginMs, options.budgetMs, startedAt);
  const tally = new Tally(options.tracer);
  const broker = await connectFromConfig(config, { connectionName: config.functionName, log });
  // The check, the pause marker's read and the opening of the channel (open, confirm.select) wait on
  // the broker at the same time: an invocation pays for the slowest, not for all. Nothing is consumed
  // before the check passed, so a failed check gives back nothing and counts no delivery.
  const opening = broker.connection.createConfirmChannel();
  const marker = brokerPauseMarker(broker.connection, config.workQueue);
  let channel: ConfirmChannel;
  try {
    let pausedUntil: number | undefined;
    [, channel, pausedUntil] = await Promise.all([options.beforeConsume?.(broker.connection), opening, readPause(marker, log)]);
    // An earlier invocation heard the partner say "slow down": take nothing until the pause is over.
    if (pausedUntil !== undefined) {
      await broker.close();
      return pausedSummary(tally, pausedUntil, startedAt);
    }
  } catch (error) {
    await opening.catch(() => undefined);
    await broker.close();
    throw error;
  }
  const marking = new PauseMarking(() => marker, log, config.functionName);
  let failure: Error | undefined;
  let copyFailure: Error | undefined;
  let closing = false;
  try {
    const channelClosed = new Promise<Error>((resolve) => {
      channel.on('error', (error: Error) =>
        resolve(new BrokerConnectionError(`The channel closed: ${error.message}`, { cause: error, reason: 'channel-closed' })),
      );
      channel.on('close', () => {
        // A lost connection closes the channel first: give the connection's own report a moment to win.
        if (!closing) setTimeout(() => resolve(new BrokerConnectionError('The channel closed', { reason: 'channel-closed' })), 100).unref();
      });
    });
    const broken = new AbortController();
    Promise.race([broker.lost, channelClosed]).then(
      (error) => {
        failure ??= error;
        broken.abort(error);
      },
      () => undefined,
    );
    const ledger = new DeliveryLedger(channel, tally);
    const brokerVersion = parseBrokerVersion(brokerVersionOf(broker.connection));
    copyFailure = await consumeUntilDone({
      options,
      connection: broker.connection,
      channel,
      ledger,
      tally,
      broker: brokerVersion,
      stopTakingAt,
      hardStopAt,
      settleBy,
      broken: broken.signal,
      onPause: marking.started,
    });
    await marking.written(settleBy - Date.now());
    closing = failure === undefined;
    if (closing) {
      await channel.close().catch(() => undefined);
      // A copy came back unroutable although the delay path was checked: its marker vouched for a
      // queue that is gone. Deleted now, the next cold start (here or in another container) checks
      // each destination and takes nothing, instead of bouncing another batch.
      if (isReturned(copyFailure)) await forgetDelayPathMarker(broker.connection, topologyOptionsFromConfig(config));
      tally.parkedDepth(await readParkedDepth(broker.connection, config.parkingQueue));
    }
  } catch (error) {
    failure ??= error as Error;
  } finally {
    await broker.close();
  }
  if (failure !== undefined) tally.fail(lostWhat(failure));
  const summary = tally.finish(startedAt);
  if (failure !== undefined) {
    throw new PullAbortedError(
      `Invocation ended early: ${failure.message}. Unsettled messages went back to ${config.workQueue}; the next invocation carries on.`,
      summary,
      { cause: failure, reason: summary.stoppedBecause as 'channel-closed' | 'connection-lost' },
    );
  }
  if (copyFailure !== undefined) throwIfNeverHeals(copyFailure, summary, config.workQueue);
  return summary;
}

/**
 * Whether the channel or the connection was lost, by typed fields: our own error's `reason`, else the
 * `classId` a broker's channel close carries (a connection close has none), else amqplib's text.
 */
function lostWhat(error: Error): 'channel-closed' | 'connection-lost' {
  const { reason, classId } = error as { reason?: unknown; classId?: unknown };
  if (reason === 'channel-closed' || reason === 'connection-lost') return reason;
  if (typeof classId === 'number' || amqplibTextFailure(error.message) === 'channel-closed') return 'channel-closed';
  return 'connection-lost';
}

/** A copy the broker returned as unroutable (`mandatory`): a destination of the delay path is gone. */
function isReturned(copyFailure: Error | undefined): boolean {
  return isNamedError<PublishError>(copyFailure, 'PublishError') && copyFailure.reason === 'returned';
}

/**
 * A copy failure that the next invocation would meet again (an unroutable copy) fails the invocation,
 * so that it shows as an error and not as a quiet `publish-failed` every run. The original is back in
 * the work queue. (A body over MAX_MESSAGE_BYTES never gets here: park-uncopyable.ts parks it.)
 */
function throwIfNeverHeals(copyFailure: Error, summary: Summary, workQueue: string): void {
  if (isReturned(copyFailure)) {
    throw new TopologyDriftError(
      `A copy came back ${copyFailure.message}. Its original is back in ${workQueue}: ${DRIFT_REMEDY}`,
      { missing: [], summary },
      { cause: copyFailure },
    );
  }
}

export { runPull };
