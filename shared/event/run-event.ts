import { vhostOfUrl } from '../amqp/broker-endpoints.js';
import { ConfirmPublisher } from '../amqp/confirm-publisher.js';
import { connectFromConfig } from '../amqp/connect-from-config.js';
import { topologyOptionsFromConfig, type Config } from '../config/config.js';
import { ConfigError, isNamedError } from '../errors.js';
import { EventBatchError } from './event-batch-error.js';
import { TopologyDriftError } from '../core/topology-drift-error.js';
import type { IdempotencyGuard } from '../idempotency/guard.js';
import type { AttemptTracer } from '../observability/attempt-tracer.js';
import type { Logger } from '../observability/logger.js';
import type { InvocationMetrics } from '../observability/metrics.js';
import type { Handler } from '../message/message.js';
import type { SecretStore } from '../amqp/secrets.js';
import type { Summary } from '../observability/summary.js';
import type { Pacer } from '../core/pacer.js';
import { Tally } from '../core/tally.js';
import { eventSettings } from '../core/mode-settings.js';
import type { TopologyOptions } from '../topology/types.js';
import type { ChannelModel } from 'amqplib';
import { createDelayRouter } from '../topology/plan.js';
import { readParkedDepth } from '../amqp/parked-depth.js';
import { decodeEvent, type EventRecord } from './decode-event.js';
import { settleBatch } from './settle-batch.js';
import { brokerPauseMarker } from '../amqp/broker-pause-marker.js';
import type { PauseMarker } from '../amqp/pause-marker.js';
import { PauseMarking, readPause } from '../core/pause-marking.js';

type EventRunOptions = {
  readonly config: Config;
  readonly handler: Handler;
  /** The `aws:rmq` event, as received: it is decoded defensively. */
  readonly event: unknown;
  /** Time this invocation may take, all included (Lambda: `getRemainingTimeInMillis()`). */
  readonly budgetMs: number;
  readonly log: Logger;
  /** @default Math.random */
  readonly random?: () => number;
  /** @default the per-container Secrets Manager cache */
  readonly secrets?: SecretStore;
  /** Handler errors and retry delays go here; the caller flushes it with the summary. */
  readonly metrics?: InvocationMetrics;
  /** Runs each handler call at most once per idempotency key. @default none: every record runs the handler */
  readonly idempotency?: IdempotencyGuard;
  /** Starts one span per attempt, which its settlement ends. @default noTracer: tracing off */
  readonly tracer?: AttemptTracer;
  /** Paces the handler starts (the wrapper's, when `config.rateLimit` is set). @default none: no limit */
  readonly pacer?: Pacer;
  /**
   * Runs once connected, before any handler, with the topology of each queue of the batch; a throw
   * fails the invocation with that error, and the whole batch comes back (the wrapper checks each
   * queue's delay path here, once per container). @default none
   */
  readonly beforeHandlers?: (connection: ChannelModel, queues: readonly TopologyOptions[]) => Promise<void>;
};

/**
 * One invocation of the event-triggered function. The event source acks or redelivers the whole batch,
 * so the function does per message what an ack cannot: a failure is published to the delay path of the
 * message's own queue with the retry count + 1, a park to that queue's parking lot, every copy
 * publisher-confirmed. It resolves (the batch is acked) only when every copy was confirmed; otherwise
 * it throws `EventBatchError` and the whole batch comes back, including the messages that succeeded.
 * @example
 * const summary = await runEvent({ config, handler, event, budgetMs: context.getRemainingTimeInMillis(), log });
 */
async function runEvent(options: EventRunOptions): Promise<Summary> {
  const { config, log } = options;
  const startedAt = Date.now();
  const tally = new Tally(options.tracer);
  const records = decodeEvent(options.event, config);
  tally.receive(records.length);
  if (records.length === 0) return tally.finish(startedAt);
  // Keep the margin inside the budget even when a caller passes a tiny budget.
  const marginMs = Math.min(config.safetyMarginMs, options.budgetMs / 2);
  const broker = await connectFromConfig(config, { connectionName: config.functionName, secrets: options.secrets, log });
  let lost = false;
  void broker.lost.then(() => {
    lost = true;
  });
  let result;
  try {
    assertOneVhost(records, vhostOfUrl(broker.endpoint));
    const topology = topologyOptionsFromConfig(config);
    const topologyOf = new Map<string, TopologyOptions>();
    for (const record of records)
      if (!topologyOf.has(record.queue)) topologyOf.set(record.queue, { ...topology, workQueue: record.queue, parkingQueue: record.parkingQueue });
    const opening = broker.connection.createConfirmChannel();
    // Each queue's pause marker is read while the delay path is checked: a paused queue's records
    // are deferred at once (an event source mapping reads one queue; a batch pauses as a whole, as its breaker opens).
    const markers = new Map<string, PauseMarker>([...topologyOf.keys()].map((queue) => [queue, brokerPauseMarker(broker.connection, queue)]));
    const reading = Promise.all([...markers.values()].map((marker) => readPause(marker, log)));
    try {
      await options.beforeHandlers?.(broker.connection, [...topologyOf.values()]);
    } catch (error) {
      await opening
        .then(
          (channel) => channel.close(),
          () => undefined,
        )
        .catch(() => undefined);
      if (!isNamedError<TopologyDriftError>(error, 'TopologyDriftError')) throw error;
      tally.stop('topology-drift');
      throw new TopologyDriftError(error.message, { missing: error.missing, summary: tally.finish(startedAt) }, { cause: error.cause });
    }
    const channel = await opening;
    const found = (await reading).filter((until) => until !== undefined);
    const marking = new PauseMarking((queue) => markers.get(queue) ?? brokerPauseMarker(broker.connection, queue), log, config.functionName);
    const routers = new Map<string, ReturnType<typeof createDelayRouter>>();
    result = await settleBatch({
      records,
      handler: options.handler,
      config,
      settings: eventSettings(topology),
      deps: {
        publisher: new ConfirmPublisher(channel, config.publishTimeoutMs),
        log,
        retryHeader: config.retryHeader,
        functionName: config.functionName,
        delayRoute: (workQueue, delayMs) => {
          // One router per queue of the batch, built on its first retry.
          let route = routers.get(workQueue);
          if (!route) routers.set(workQueue, (route = createDelayRouter(topologyOf.get(workQueue) ?? { ...topology, workQueue })));
          return route(delayMs);
        },
        now: () => new Date(),
        metrics: options.metrics,
      },
      stopAt: startedAt + options.budgetMs - marginMs,
      hardStopAt: startedAt + options.budgetMs - marginMs / 2,
      random: options.random ?? Math.random,
      tally,
      idempotency: options.idempotency,
      pacer: options.pacer,
      pausedUntil: found.length === 0 ? undefined : Math.max(...found),
      onPause: marking.started,
    });
    await marking.written(startedAt + options.budgetMs - marginMs / 4 - Date.now());
    tally.breakerOpened(result.breakerOpened);
    if (result.failure === undefined) {
      await channel.close().catch(() => undefined);
      tally.parkedDepth(await readParkedDepth(broker.connection, config.parkingQueue));
    }
  } finally {
    await broker.close();
  }
  if (result.failure !== undefined) {
    tally.fail(lost ? 'connection-lost' : 'publish-failed');
    const summary = tally.finish(startedAt);
    throw new EventBatchError(
      `A copy was not confirmed (${result.failure.message}); the event source will deliver the whole batch of ${records.length} again`,
      summary,
      { cause: result.failure },
    );
  }
  // Idle with a pause heard is said as paused (Tally#finish).
  tally.stop(result.outOfTime ? 'budget' : result.breakerOpened ? 'breaker-open' : 'idle');
  const summary = tally.finish(startedAt);
  if (summary.requeued > 0) log.warn('the budget ran out: untried messages went back to the tail of their queue', { count: summary.requeued });
  return summary;
}

/** The copies go to the connection's vhost: an event from another vhost would be mis-delivered. */
function assertOneVhost(records: readonly EventRecord[], connected: string): void {
  const other = records.find((record) => record.vhost !== undefined && record.vhost !== connected);
  if (other) {
    throw new ConfigError(
      `The event comes from vhost ${JSON.stringify(other.vhost)} (queue ${other.queue}) but the function connects to vhost ${JSON.stringify(connected)}: set AMQP_VHOST (or the URL's path) to the event source mapping's VIRTUAL_HOST`,
    );
  }
}

export { runEvent };
export type { EventRunOptions };
