/**
 * The pull transport as the invocation sees it: the work queue over AMQP 0-9-1, taken by a short-lived
 * consumer (prefetch = BATCH_SIZE), each verdict settled by an ack, a copy then an ack (publish-then-ack;
 * the reverse with ack-then-publish), a nack with requeue, or a reject the broker dead-letters. Opened by
 * pull.ts.
 */
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { lostWhat } from '../amqp/connect-failure.js';
import { ConfirmPublisher } from '../amqp/confirm-publisher.js';
import type { BrokerConnection } from '../amqp/connection.js';
import { readParkedDepth } from '../amqp/parked-depth.js';
import { ShortLivedConsumer } from '../amqp/short-lived-consumer.js';
import { topologyOptionsFromConfig } from '../config/config.js';
import { DRIFT_REMEDY, forgetDelayPathMarker } from '../copy/delay-path-check.js';
import { describeDelivery, failureOf } from '../copy/failure.js';
import type { InvocationOptions } from '../core/invocation.js';
import type { Taken, Transport } from '../core/transport.js';
import type { Origin } from '../core/lifecycle-options.js';
import { type ModeSettings, parseBrokerVersion, pullSettings } from '../core/mode-settings.js';
import { PullAbortedError, TopologyDriftError } from '../core/invocation-errors.js';
import type { FailureReason, Tally } from '../core/tally.js';
import type { ParkVerdict, Verdict } from '../core/verdict.js';
import { BrokerConnectionError, isNamedError, type PublishError } from '../errors.js';
import { noMetrics } from '../observability/metrics.js';
import type { Summary } from '../observability/summary.js';
import { brokerVersionOf } from '../topology/broker-ops.js';
import { createDelayRouter } from '../topology/plan.js';
import { DeliveryLedger } from './delivery-ledger.js';
import { type PullSettleDeps, settleFailure } from './settle-failure.js';

/** Takes from the consumer and settles each verdict through settle-failure.ts; see the file's header. */
class PullTransport implements Transport {
  public readonly maxMessages: number;
  public readonly settleHoldsTurn = false;
  public readonly settings: ModeSettings;
  private readonly origin: Origin;
  private readonly deps: PullSettleDeps;
  private copyFailure: Error | undefined;
  private parkUncopyable: ((delivery: ConsumeMessage, verdict: ParkVerdict) => Promise<void>) | undefined;

  private constructor(
    private readonly options: InvocationOptions,
    private readonly broker: BrokerConnection,
    private readonly channel: ConfirmChannel,
    private readonly consumer: ShortLivedConsumer,
    private readonly ledger: DeliveryLedger,
    private readonly tally: Tally,
    private readonly broken: AbortController,
    /** Set before our own close of the channel, which is no failure. */
    private readonly watch: { closing: boolean },
  ) {
    const { config, log } = options;
    const topology = topologyOptionsFromConfig(config);
    this.maxMessages = config.maxMessages;
    this.origin = { queue: config.workQueue };
    this.settings = pullSettings(config, topology, parseBrokerVersion(brokerVersionOf(broker.connection)));
    // Built on the first retry: with MAX_RETRIES=0 there is no delay path, and none is ever asked for.
    let route: ReturnType<typeof createDelayRouter> | undefined;
    const { ackOrder, retryHeader, workQueue, parkingQueue, functionName, maxMessageBytes } = config;
    this.deps = {
      log,
      metrics: options.metrics ?? noMetrics,
      retryHeader,
      functionName,
      parkingQueue,
      delayRoute: (delayMs: number) => {
        route ??= createDelayRouter(topology);
        return route(delayMs);
      },
      now: () => new Date(),
      publisher: new ConfirmPublisher(channel, config.publishTimeoutMs, maxMessageBytes),
      maxMessageBytes,
      ledger,
      ackOrder,
      queue: workQueue,
      onCopyFailed: (error) => {
        if (this.copyFailure === undefined) log.error('a copy was not confirmed; no more messages are taken in this invocation', { reason: error.message });
        this.copyFailure ??= error;
      },
    };
  }

  /** Starts the consumer on an open channel; the transport is lost when the channel or the connection is. */
  public static async start(options: InvocationOptions, broker: BrokerConnection, channel: ConfirmChannel, tally: Tally): Promise<PullTransport> {
    const broken = new AbortController();
    const watch = { closing: false };
    const lose = (error: Error): void => broken.abort(error);
    channel.on('error', (error: Error) => lose(new BrokerConnectionError(`The channel closed: ${error.message}`, { cause: error, reason: 'channel-closed' })));
    channel.on('close', () => {
      // A lost connection closes the channel first: give the connection's own report a moment to win.
      if (!watch.closing) setTimeout(() => lose(new BrokerConnectionError('The channel closed', { reason: 'channel-closed' })), 100).unref();
    });
    broker.lost.then(lose, () => undefined);
    const consumer = await ShortLivedConsumer.start(channel, options.config.workQueue, options.config.batchSize, { stopOn: broken.signal });
    return new PullTransport(options, broker, channel, consumer, new DeliveryLedger(channel, tally), tally, broken, watch);
  }

  public get lost(): AbortSignal {
    return this.broken.signal;
  }

  public get outstanding(): number {
    return this.ledger.outstanding;
  }

  /** A `then`, not an async function: one promise a message, on the hot path. */
  public take(waitMs: number): Promise<Taken | undefined> {
    return this.consumer.take(waitMs).then(this.takenOf);
  }

  /** A new consumer with `prefetch`; a failure shows as the channel's loss, or as a queue gone idle. */
  public narrow(prefetch: number): void {
    const { log } = this.options;
    if (log.debugEnabled) log.debug('the stop nears: taking fewer messages', { prefetch, queue: this.origin.queue });
    this.consumer.narrow(prefetch).catch(() => undefined);
  }

  public ended(): 'publish-failed' | 'consumer-cancelled' | undefined {
    if (this.copyFailure !== undefined) return 'publish-failed';
    return this.consumer.cancelledByBroker ? 'consumer-cancelled' : undefined;
  }

  public takeBuffered(): Taken[] {
    return this.consumer.takeBuffered().map((delivery) => this.received(delivery));
  }

  /**
   * The fallback chain of a pull verdict: an ack; a copy then an ack (a copy that fails gives the
   * original back and stops the taking; ack-then-publish falls back to a parked copy, then a lean one);
   * a park no copy can carry, rejected to the broker's dead-lettering; or a nack with requeue.
   */
  public settle(taken: Taken, verdict: Verdict): Promise<void> | undefined {
    const delivery = taken.delivery as ConsumeMessage;
    const { ledger, deps } = this;
    if (!ledger.isOpen(delivery)) return undefined;
    switch (verdict.kind) {
      case 'ack':
        if (ledger.ack(delivery, 'acked') && deps.log.debugEnabled) deps.log.debug('message acked', describeDelivery(delivery));
        return undefined;
      case 'duplicate':
        if (ledger.ack(delivery, 'skippedDuplicates') && deps.log.debugEnabled)
          deps.log.debug('duplicate acked without calling the handler: its idempotency key had completed', describeDelivery(delivery));
        return undefined;
      case 'give-back':
        ledger.requeue(delivery);
        return undefined;
      case 'park':
        if (!verdict.copyable) return this.parkWithoutCopy(delivery, verdict);
        return settleFailure(deps, failureOf(delivery, verdict));
      default:
        return settleFailure(deps, failureOf(delivery, verdict));
    }
  }

  /** Sends the acks of this turn, then cancels the consumer: what arrived meanwhile goes back untouched. */
  public async stopTaking(): Promise<Taken[]> {
    // Late acks (after the hard stop) are sent together after the cancel (see DeliveryLedger#hold).
    this.ledger.hold();
    await this.consumer.stop().catch(() => undefined);
    return this.takeBuffered();
  }

  public async finish(): Promise<void> {
    const { config } = this.options;
    // Counted as requeued: the engine's warning at the end names them with the rest.
    this.ledger.requeueAll();
    this.ledger.flush();
    if (this.broken.signal.aborted) return;
    this.watch.closing = true;
    await this.channel.close().catch(() => undefined);
    // A copy came back unroutable although the delay path was checked: its marker vouched for a
    // queue that is gone. Deleted now, the next cold start (here or in another container) checks
    // each destination and takes nothing, instead of bouncing another batch.
    if (isReturned(this.copyFailure)) await forgetDelayPathMarker(this.broker.connection, topologyOptionsFromConfig(config));
    this.tally.parkedDepth(await readParkedDepth(this.broker.connection, config.parkingQueue));
  }

  public close(): Promise<void> {
    this.watch.closing ||= !this.broken.signal.aborted;
    return this.broker.close();
  }

  public async failed(failure: Error): Promise<{ reason: FailureReason; error: (summary: Summary) => Error }> {
    const reason = lostWhat(failure);
    const { workQueue } = this.options.config;
    return {
      reason,
      error: (summary) =>
        new PullAbortedError(
          `Invocation ended early: ${failure.message}. Unsettled messages went back to ${workQueue}; the next invocation carries on.`,
          summary,
          {
            cause: failure,
            reason,
          },
        ),
    };
  }

  /**
   * A copy failure that the next invocation would meet again (an unroutable copy) fails the invocation,
   * so that it shows as an error and not as a quiet `publish-failed` every run. The original is back in
   * the work queue. (A body over MAX_MESSAGE_BYTES never gets here: park-uncopyable.ts parks it.)
   */
  public completed(summary: Summary): Error | undefined {
    const { copyFailure } = this;
    if (copyFailure === undefined || !isReturned(copyFailure)) return undefined;
    return new TopologyDriftError(
      `A copy came back ${copyFailure.message}. Its original is back in ${this.options.config.workQueue}: ${DRIFT_REMEDY}`,
      { missing: [], summary },
      { cause: copyFailure },
    );
  }

  private readonly takenOf = (delivery: ConsumeMessage | undefined): Taken | undefined => (delivery === undefined ? undefined : this.received(delivery));

  private received(delivery: ConsumeMessage): Taken {
    this.ledger.received(delivery);
    return { delivery, origin: this.origin };
  }

  /** A body over MAX_MESSAGE_BYTES: see park-uncopyable.ts. Resolves once it is settled one way or the other. */
  private async parkWithoutCopy(delivery: ConsumeMessage, verdict: ParkVerdict): Promise<void> {
    // Loaded on first use: a body over MAX_MESSAGE_BYTES is rare, and a cold start should not parse the argument reader.
    const { createUncopyablePark } = await import('./park-uncopyable.js');
    const { config, log } = this.options;
    this.parkUncopyable ??= createUncopyablePark({
      connection: this.broker.connection,
      ledger: this.ledger,
      log,
      topology: topologyOptionsFromConfig(config),
      publishTimeoutMs: config.publishTimeoutMs,
      copyContext: this.deps,
    });
    return this.parkUncopyable(delivery, verdict);
  }
}

/** A copy the broker returned as unroutable (`mandatory`): a destination of the delay path is gone. */
function isReturned(copyFailure: Error | undefined): boolean {
  return isNamedError<PublishError>(copyFailure, 'PublishError') && copyFailure.reason === 'returned';
}

export { PullTransport };
