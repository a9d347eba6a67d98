/**
 * The event transport: an `aws:rmq` batch, a finite source taken in event order. The event source acks
 * or redelivers the whole batch, so each verdict is settled by what an ack cannot do: a failure is
 * published to the delay path of the message's own queue with the retry count + 1, a park to that
 * queue's parking lot, every copy publisher-confirmed. The invocation resolves (the batch is acked)
 * only when every copy was confirmed; otherwise it throws `EventBatchError` and the whole batch comes
 * back, including the messages that succeeded. The invocation around it is core/invocation.ts.
 */
import type { ChannelModel, ConfirmChannel } from 'amqplib';
import { vhostOfUrl } from '../amqp/broker-endpoints.js';
import { ConfirmPublisher } from '../amqp/confirm-publisher.js';
import { connectFromConfig } from '../amqp/connect-from-config.js';
import type { BrokerConnection } from '../amqp/connection.js';
import { readParkedDepth } from '../amqp/parked-depth.js';
import { amqp091PauseMarker, type PauseMarker } from '../amqp/pause-marker.js';
import type { SecretStore } from '../amqp/secrets.js';
import { topologyOptionsFromConfig } from '../config/config.js';
import { InFlight } from '../core/in-flight.js';
import { type InvocationOptions, runInvocation } from '../core/invocation.js';
import type { OpenTransport, Taken, Transport } from '../core/transport.js';
import { eventSettings, type ModeSettings } from '../core/mode-settings.js';
import { readPause } from '../core/pause.js';
import type { Tally } from '../core/tally.js';
import { EventBatchError, TopologyDriftError } from '../core/invocation-errors.js';
import type { Verdict } from '../core/verdict.js';
import { ConfigError, isNamedError } from '../errors.js';
import type { Summary } from '../observability/summary.js';
import { createDelayRouter } from '../topology/plan.js';
import type { TopologyOptions } from '../topology/types.js';
import { decodeEvent, type EventRecord } from './decode-event.js';
import { type EventSettleDeps, settleEventVerdict } from './settle-record.js';

type EventRunOptions = InvocationOptions & {
  /** The `aws:rmq` event, as received: it is decoded defensively. */
  readonly event: unknown;
  /** @default the per-container Secrets Manager cache */
  readonly secrets?: SecretStore;
  /**
   * Runs once connected, before any handler, with the topology of each queue of the batch; a throw
   * fails the invocation with that error, and the whole batch comes back (the wrapper checks each
   * queue's delay path here, once per container). @default none
   */
  readonly beforeHandlers?: (connection: ChannelModel, queues: readonly TopologyOptions[]) => Promise<void>;
};

/**
 * One invocation of the event-triggered function: decode the batch, connect, check, read each queue's
 * pause marker, then take and settle (core/invocation.ts).
 * @example
 * const summary = await runEvent({ config, handler, event, budgetMs: context.getRemainingTimeInMillis(), log });
 */
function runEvent(options: EventRunOptions): Promise<Summary> {
  return runInvocation(openEvent(options), options);
}

function openEvent(options: EventRunOptions): OpenTransport {
  return async ({ tally, startedAt }) => {
    const { config, log } = options;
    const records = decodeEvent(options.event, config);
    tally.receive(records.length);
    if (records.length === 0) return { transport: undefined, pausedUntil: undefined };
    const broker = await connectFromConfig(config, { connectionName: config.functionName, secrets: options.secrets, log });
    try {
      assertOneVhost(records, vhostOfUrl(broker.endpoint));
      const topology = topologyOptionsFromConfig(config);
      const topologyOf = new Map<string, TopologyOptions>();
      for (const record of records)
        if (!topologyOf.has(record.queue)) topologyOf.set(record.queue, { ...topology, workQueue: record.queue, parkingQueue: record.parkingQueue });
      const opening = broker.connection.createConfirmChannel();
      // Each queue's pause marker is read while the delay path is checked: a paused queue's records
      // are deferred at once (an event source mapping reads one queue; a batch pauses as a whole, as its breaker opens).
      const markers = new Map<string, PauseMarker>([...topologyOf.keys()].map((queue) => [queue, amqp091PauseMarker(broker.connection, queue)]));
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
      return {
        transport: new EventTransport(options, records, broker, channel, topologyOf, tally),
        pausedUntil: found.length === 0 ? undefined : Math.max(...found),
        markerOf: (queue) => markers.get(queue) ?? amqp091PauseMarker(broker.connection, queue),
      };
    } catch (error) {
      await broker.close();
      throw error;
    }
  };
}

class EventTransport implements Transport {
  public readonly settings: ModeSettings;
  /** The batch is what it is: MAX_MESSAGES does not apply. */
  public readonly maxMessages = Number.POSITIVE_INFINITY;
  /** A record holds its turn until its copy is confirmed: a failed copy then starts no further handler. */
  public readonly settleHoldsTurn = true;
  public readonly outstanding = 0;
  /** Aborted by the first copy that was not confirmed: the whole batch comes back, nothing more is settled. */
  private readonly doomed = new AbortController();
  private readonly deps: EventSettleDeps;
  private readonly settled = new Set<EventRecord>();
  private readonly publishing = new InFlight();
  private next = 0;
  private exhausted = false;
  private connectionLost = false;

  public constructor(
    private readonly options: EventRunOptions,
    private readonly records: readonly EventRecord[],
    private readonly broker: BrokerConnection,
    private readonly channel: ConfirmChannel,
    topologyOf: ReadonlyMap<string, TopologyOptions>,
    private readonly tally: Tally,
  ) {
    const { config, log } = options;
    const topology = topologyOptionsFromConfig(config);
    this.settings = eventSettings(topology);
    // A lost connection fails only the copies still to come: what was confirmed before it stays done.
    void broker.lost.then(() => {
      this.connectionLost = true;
    });
    const routers = new Map<string, ReturnType<typeof createDelayRouter>>();
    this.deps = {
      publisher: new ConfirmPublisher(channel, config.publishTimeoutMs),
      log,
      retryHeader: config.retryHeader,
      functionName: config.functionName,
      delayRoute: (workQueue, delayMs) => {
        // One router per queue of the batch, built on its first retry.
        let route = routers.get(workQueue);
        if (!route) {
          route = createDelayRouter(topologyOf.get(workQueue) ?? { ...topology, workQueue });
          routers.set(workQueue, route);
        }
        return route(delayMs);
      },
      now: () => new Date(),
      metrics: options.metrics,
    };
  }

  public get lost(): AbortSignal {
    return this.doomed.signal;
  }

  public async take(): Promise<Taken | undefined> {
    const record = this.records[this.next];
    if (record === undefined) {
      this.exhausted = true;
      return undefined;
    }
    this.next++;
    return { delivery: record.delivery, origin: record };
  }

  /** A take found the whole batch taken: the source is idle. */
  public ended(): 'idle' | undefined {
    return this.exhausted ? 'idle' : undefined;
  }

  public takeBuffered(): Taken[] {
    const rest = this.records.slice(this.next);
    this.next = this.records.length;
    return rest.map((record) => ({ delivery: record.delivery, origin: record }));
  }

  /**
   * Publishes what the verdict needs (settle-record.ts) and counts it once the broker confirmed;
   * a copy that is not confirmed fails the batch, which comes back whole.
   */
  public settle(taken: Taken, verdict: Verdict): Promise<void> | undefined {
    const record = taken.origin as EventRecord;
    if (this.settled.has(record) || this.doomed.signal.aborted) return undefined;
    this.settled.add(record);
    const { log } = this.options;
    const done = settleEventVerdict(this.deps, record, verdict).then(
      (outcome) => this.tally.settle(outcome, record.delivery),
      (error: Error) => {
        this.tally.unsettled(record.delivery, `copy not confirmed (${error.message}): the whole batch comes back`);
        log.error('a copy was not confirmed; the whole batch will come back', {
          messageId: record.delivery.properties.messageId,
          queue: record.queue,
          reason: error.message,
        });
        this.doomed.abort(error);
      },
    );
    this.publishing.add(done);
    return done;
  }

  public async stopTaking(): Promise<Taken[]> {
    return [];
  }

  /** Waits for every copy (each has its publish timeout): the batch may be acked only when all were confirmed. */
  public async finish(): Promise<void> {
    await this.publishing.allFinished();
    if (this.doomed.signal.aborted) return;
    await this.channel.close().catch(() => undefined);
    this.tally.parkedDepth(await readParkedDepth(this.broker.connection, this.options.config.parkingQueue));
  }

  public close(): Promise<void> {
    return this.broker.close();
  }

  public async failed(failure: Error): Promise<{ reason: 'connection-lost' | 'publish-failed'; error: (summary: Summary) => Error }> {
    const count = this.records.length;
    return {
      reason: this.connectionLost ? 'connection-lost' : 'publish-failed',
      error: (summary) =>
        new EventBatchError(`A copy was not confirmed (${failure.message}); the event source will deliver the whole batch of ${count} again`, summary, {
          cause: failure,
        }),
    };
  }
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

export { openEvent, runEvent };
