import { connectFromConfig } from '../amqp/connect-from-config.js';
import type { Config } from '../config/config.js';
import { type BrokerConnectionError, isNamedError } from '../errors.js';
import { invocationDeadlines } from '../core/deadlines.js';
import { Tally } from '../core/tally.js';
import { brokerVersionOf } from '../topology/broker-ops.js';
import { PullAbortedError } from '../core/pull-aborted-error.js';
import type { PullOptions } from '../core/pull-options.js';
import type { Summary } from '../observability/summary.js';
import { nativeBrokerRefusal } from '../topology/native-broker.js';
import { connectAmqp10FromConfig } from './amqp10-from-config.js';
import { settleUntilDone } from './native-loop.js';
import { type NativeManagement, openNativeManagement } from './native-management.js';
import { isUnconvertible, sweepUnconvertible } from './unconvertible-sweep.js';
import { NativeReceiver } from './native-receiver.js';
import { SettlementWriter } from './settlement-writer.js';
import { amqp10PauseMarker } from './amqp10-pause-marker.js';
import { PauseMarking, pausedSummary, readPause } from '../core/pause-marking.js';

/** The longest the parking lot's depth is waited for at the end (one request takes about 1 ms). */
const PARKED_DEPTH_WAIT_MS = 1_000;

/**
 * One invocation of the pull function on a native queue (`delayMode: 'native'`, RabbitMQ 4.3+):
 * connect over AMQP 1.0, refuse a broker older than 4.3 before anything is taken, take up to
 * BATCH_SIZE unsettled deliveries at a time and settle each one with the outcome its verdict asks
 * for; the broker delays, dead-letters or drops each as told. Whatever is not settled when the
 * connection closes goes back to the queue. With `checkTopology` (the default; the pull function asks
 * for it at a container's first invocation) the work queue and the parking lot are checked before the
 * receiver attaches (native-topology-check.ts); the parking lot's depth is read at the end. The queue's
 * pause marker is read before the receiver attaches: a paused queue takes nothing.
 */
async function runNativePull(options: PullOptions, checks: { readonly checkTopology?: boolean } = {}): Promise<Summary> {
  const { config, log } = options;
  const startedAt = Date.now();
  const { stopTakingAt, hardStopAt } = invocationDeadlines(config.safetyMarginMs, options.budgetMs, startedAt);
  const tally = new Tally(options.tracer);
  const broker = await connectAmqp10FromConfig(config, { connectionName: config.functionName, log }).catch((error: unknown) =>
    refuseOlderBroker(config, error),
  );
  let receiver: NativeReceiver;
  let management: NativeManagement;
  try {
    const refusal = nativeBrokerRefusal(broker.brokerVersion);
    if (refusal !== undefined) throw refusal;
    management = await openNativeManagement(broker.connection, { config, log, checkTopology: checks.checkTopology ?? true });
    const pausedUntil = await readPause(amqp10PauseMarker(broker.connection, management.api, config.workQueue), log);
    // An earlier invocation heard the partner say "slow down": attach nothing until the pause is over.
    if (pausedUntil !== undefined) {
      await broker.close();
      return pausedSummary(tally, pausedUntil, startedAt);
    }
    receiver = await NativeReceiver.open(broker.connection, config.workQueue, config.batchSize);
  } catch (error) {
    await broker.close();
    throw error;
  }
  const marking = new PauseMarking((queue) => amqp10PauseMarker(broker.connection, management.api, queue), log, config.functionName);
  let failure: Error | undefined;
  try {
    const broken = new AbortController();
    broker.lost.then(
      (error) => {
        failure ??= error;
        broken.abort(error);
      },
      () => undefined,
    );
    await settleUntilDone({
      options,
      receiver,
      writer: new SettlementWriter(),
      tally,
      stopTakingAt,
      hardStopAt,
      broken: broken.signal,
      onPause: marking.started,
    });
    receiver.close();
    await marking.written(hardStopAt - Date.now());
    tally.parkedDepth(await management.parkedDepth(Math.min(PARKED_DEPTH_WAIT_MS, hardStopAt - Date.now())));
  } catch (error) {
    failure ??= error as Error;
  } finally {
    await broker.close();
  }
  if (failure === undefined) return tally.finish(startedAt);
  const swept = isUnconvertible(failure) ? await sweep(options, tally) : '';
  tally.fail('connection-lost');
  const summary = tally.finish(startedAt);
  throw new PullAbortedError(
    `Invocation ended early: ${failure.message}. Unsettled messages went back to ${config.workQueue}; the next invocation carries on.${swept}`,
    summary,
    { cause: failure, reason: 'connection-lost' },
  );
}

/** Parks what the broker could not convert (see unconvertible-sweep.ts); says what it did, for the error. */
async function sweep(options: PullOptions, tally: Tally): Promise<string> {
  const { config, log } = options;
  try {
    const parked = await sweepUnconvertible(config, log, config.batchSize);
    tally.receive(parked);
    for (let i = 0; i < parked; i++) tally.settle('parked');
    return ` The broker ended the session over a message it cannot convert to AMQP 1.0; ${parked} such message(s) at the head of ${config.workQueue} went to ${config.parkingQueue} as they were.`;
  } catch (error) {
    log.error('could not look for a message AMQP 1.0 cannot carry', { reason: (error as Error).message });
    return '';
  }
}

/**
 * A broker that would not speak AMQP 1.0 may simply be too old (3.x has it only as a plugin, and no
 * delayed retry): asked over 0-9-1, it names its version, and the refusal says what works there.
 * Anything else fails with the AMQP 1.0 connection's own error, at once: a timeout, a refused login or
 * a certificate would only fail (or wait) again over 0-9-1.
 */
async function refuseOlderBroker(config: Config, error: unknown): Promise<never> {
  if (!isNamedError<BrokerConnectionError>(error, 'BrokerConnectionError') || error.reason !== 'unreachable') throw error;
  const broker = await connectFromConfig(config, { connectionName: config.functionName }).catch(() => undefined);
  if (broker !== undefined) {
    const refusal = nativeBrokerRefusal(brokerVersionOf(broker.connection));
    await broker.close();
    if (refusal !== undefined) throw refusal;
  }
  throw error;
}

export { runNativePull };
