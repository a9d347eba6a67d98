/**
 * The pull mode: the work queue over AMQP 0-9-1, taken by a short-lived consumer (prefetch =
 * BATCH_SIZE), each verdict settled by an ack, a copy then an ack (publish-then-ack; the reverse with
 * ack-then-publish), a nack with requeue, or a reject the broker dead-letters. This file opens it
 * (connect, check, read the pause marker, open the channel); the transport is pull-transport.ts, the
 * invocation around it (deadlines, pause, take loop, end sequence, summary) core/invocation.ts.
 */
import type { ChannelModel } from 'amqplib';
import { amqp091PauseMarker } from '../amqp/pause-marker.js';
import { connectFromConfig } from '../amqp/connect-from-config.js';
import { type InvocationOptions, runInvocation } from '../core/invocation.js';
import type { OpenTransport } from '../core/transport.js';
import { readPause } from '../core/pause.js';
import type { Summary } from '../observability/summary.js';
import { PullTransport } from './pull-transport.js';

/** What one pull invocation (`runPull`) is given. */
type PullOptions = InvocationOptions & {
  /**
   * Runs once connected, before any message is taken; a throw ends the invocation with that error
   * (the wrapper checks the delay path here, once per container). @default none
   */
  readonly beforeConsume?: (connection: ChannelModel) => Promise<void>;
};

/**
 * One invocation of the scheduled pull function: connect, check, read the pause marker, then take and
 * settle (core/invocation.ts). Whatever is not settled by the end goes back to the queue, and the
 * connection is always closed.
 * @example const summary = await runPull({ config, handler, budgetMs: context.getRemainingTimeInMillis(), log });
 */
function runPull(options: PullOptions): Promise<Summary> {
  return runInvocation(openPull(options), options);
}

/**
 * Connects and opens the consumer. The check, the pause marker's read and the opening of the channel
 * (open, confirm.select) wait on the broker at the same time: an invocation pays for the slowest, not
 * for all. Nothing is consumed before the check passed, so a failed check gives back nothing.
 */
function openPull(options: PullOptions): OpenTransport {
  return async ({ tally }) => {
    const { config, log } = options;
    const broker = await connectFromConfig(config, { connectionName: config.functionName, log });
    const opening = broker.connection.createConfirmChannel();
    const marker = amqp091PauseMarker(broker.connection, config.workQueue);
    try {
      const [, channel, pausedUntil] = await Promise.all([options.beforeConsume?.(broker.connection), opening, readPause(marker, log)]);
      if (pausedUntil !== undefined) {
        await broker.close();
        return { transport: undefined, pausedUntil };
      }
      const transport = await PullTransport.start(options, broker, channel, tally);
      return { transport, markerOf: () => marker };
    } catch (error) {
      await opening.catch(() => undefined);
      await broker.close();
      throw error;
    }
  };
}

export { openPull, runPull };
