/**
 * The native transport (`delayMode: 'native'`, RabbitMQ 4.3+): the work queue over AMQP 1.0, taken
 * with up to BATCH_SIZE unsettled deliveries at a time, each verdict settled with one AMQP 1.0
 * outcome that the broker carries out (native-annotations.ts): it delays, dead-letters or drops the
 * message as told, and nothing is published. What is not settled when the link closes goes back to
 * the queue. The invocation around it is core/invocation.ts.
 */
import type { Config } from '../config/config.js';
import { describeFailure, failureOf } from '../copy/failure-copy.js';
import { type InvocationOptions, runInvocation } from '../core/invocation.js';
import type { OpenTransport, Taken, Transport } from '../core/transport.js';
import type { Origin } from '../core/lifecycle-options.js';
import { type ModeSettings, nativeSettings } from '../core/mode-settings.js';
import { readPause } from '../core/pause.js';
import { PullAbortedError } from '../core/invocation-errors.js';
import type { Tally } from '../core/tally.js';
import type { Verdict } from '../core/verdict.js';
import { type BrokerConnectionError, isNamedError } from '../errors.js';
import { type InvocationMetrics, noMetrics } from '../observability/metrics.js';
import type { Outcome as SummaryOutcome, Summary } from '../observability/summary.js';
import { brokerVersionOf } from '../topology/broker-ops.js';
import { nativeBrokerRefusal } from '../topology/native-broker.js';
import type { Amqp10Connection } from './amqp10-connection.js';
import { connectFromConfigLate } from './amqp091-late.js';
import { connectAmqp10FromConfig } from './amqp10-from-config.js';
import { amqp10PauseMarker } from './amqp10-pause-marker.js';
import { NativeAnnotation, amqp10Outcome } from './native-annotations.js';
import { fromAmqp10 } from './native-delivery.js';
import { type NativeManagement, openNativeManagement } from './native-management.js';
import { NativeReceiver, type Received } from './native-receiver.js';
import { SettlementWriter } from './settlement-writer.js';
import { isUnconvertible, sweepUnconvertible } from './unconvertible-sweep.js';
import { LiveList } from '../live-list.js';

/** The longest the parking lot's depth is waited for at the end (one request takes about 1 ms). */
const PARKED_DEPTH_WAIT_MS = 1_000;

/**
 * One invocation of the pull function on a native queue: connect over AMQP 1.0, refuse a broker
 * older than 4.3 before anything is taken, then take and settle (core/invocation.ts). With
 * `checkTopology` (the default; the pull function asks for it at a container's first invocation) the
 * work queue and the parking lot are checked before the receiver is given credit (native-topology-check.ts).
 * The queue's pause marker is read before the receiver is given credit: a paused queue takes nothing.
 * @example const summary = await runNativePull({ config, handler, budgetMs, log }, { checkTopology: true });
 */
function runNativePull(options: InvocationOptions, checks: { readonly checkTopology?: boolean } = {}): Promise<Summary> {
  return runInvocation(openNative(options, checks.checkTopology ?? true), options);
}

function openNative(options: InvocationOptions, checkTopology: boolean): OpenTransport {
  return async ({ tally }) => {
    const { config, log } = options;
    const broker = await connectAmqp10FromConfig(config, { connectionName: config.functionName, log }).catch((error: unknown) =>
      refuseOlderBroker(config, error),
    );
    try {
      const refusal = nativeBrokerRefusal(broker.brokerVersion);
      if (refusal !== undefined) throw refusal;
      // Side by side, as each takes a round trip: the receiver attaches without credit while the
      // management API attaches, checks the topology and reads the pause marker; credit is granted only
      // when the check passed and the queue is not paused, so nothing is taken before.
      const attaching = NativeReceiver.attach(broker.connection, config.workQueue, config.batchSize);
      attaching.catch(() => undefined);
      const management = openNativeManagement(broker.connection, { config, log, checkTopology });
      const markerOf = (queue: string) => amqp10PauseMarker(broker.connection, management.api, queue);
      // With a check, a management API that cannot attach fails the check: no pause read to warn about.
      const pausing = checkTopology
        ? management.api().then((api) => (api === undefined ? undefined : readPause(markerOf(config.workQueue), log)))
        : readPause(markerOf(config.workQueue), log);
      // The check's error first: it names what is missing and what to run. Closing the connection
      // (below) detaches the receiver, which has no credit and so took nothing.
      await management.checked;
      const pausedUntil = await pausing;
      // An earlier invocation heard the partner say "slow down": take nothing until the pause is over.
      if (pausedUntil !== undefined) {
        await broker.close();
        return { transport: undefined, pausedUntil };
      }
      const receiver = await attaching;
      receiver.start();
      return { transport: new NativeTransport(options, broker, receiver, management, tally), markerOf };
    } catch (error) {
      await broker.close();
      throw error;
    }
  };
}

/** A message this transport took: the Taken it hands out, with rhea's delivery, in the open list until settled. */
type NativeTaken = Taken & { index: number; readonly received: Received };

class NativeTransport implements Transport {
  // The retry count travels in an annotation (a header to the handler): RETRY_HEADER does not apply.
  public readonly retryHeader = NativeAnnotation.retryNo;
  public readonly settings: ModeSettings = nativeSettings(NativeAnnotation.failedSettlements);
  public readonly maxMessages: number;
  public readonly settleHoldsTurn = false;
  private readonly broken = new AbortController();
  private readonly lostSignal = this.broken.signal;
  private readonly writer = new SettlementWriter();
  /** Taken and not settled, each with rhea's delivery to settle. */
  private readonly open = new LiveList<NativeTaken>();
  private readonly origin: Origin;
  private readonly metrics: InvocationMetrics;

  public constructor(
    private readonly options: InvocationOptions,
    private readonly broker: Amqp10Connection,
    private readonly receiver: NativeReceiver,
    private readonly management: NativeManagement,
    private readonly tally: Tally,
  ) {
    this.maxMessages = options.config.maxMessages;
    this.origin = { queue: options.config.workQueue };
    this.metrics = options.metrics ?? noMetrics;
    broker.lost.then(
      (error: Error) => this.broken.abort(error),
      () => undefined,
    );
  }

  public get lost(): AbortSignal {
    return this.broken.signal;
  }

  public get outstanding(): number {
    return this.receiver.outstanding;
  }

  /** One promise a message on the hot path: resolved at once when a delivery is buffered, else a `then` on the wait. */
  public take(waitMs: number): Promise<Taken | undefined> {
    const arrived = this.receiver.takeArrived();
    if (arrived !== undefined) return Promise.resolve(this.admit(arrived));
    return this.receiver.take(waitMs).then(this.takenOf);
  }

  public ended(): 'consumer-cancelled' | undefined {
    return this.receiver.cancelledByBroker ? 'consumer-cancelled' : undefined;
  }

  public takeBuffered(): Taken[] {
    return this.receiver.takeBuffered().map((received) => this.admit(received));
  }

  /** One outcome per verdict, final once written: there is no copy to wait for, so no fallback. */
  public settle(taken: Taken, verdict: Verdict): undefined {
    const record = this.openRecordOf(taken);
    // The signal read once: AbortController#signal is a checked getter, too slow to read per message.
    if (record === undefined || this.lostSignal.aborted) return undefined;
    const { config, log } = this.options;
    const { delivery } = record;
    this.open.remove(record);
    this.writer.settle(record.received.delivery, amqp10Outcome(verdict, delivery, { now: Date.now(), functionName: config.functionName }));
    this.receiver.settled();
    this.tally.settle(summaryOutcome(verdict), delivery);
    if (verdict.kind === 'retry') this.metrics.retryDelay(verdict.delayMs);
    // The same line the copy path writes for a park (copy/failure-copy.ts).
    if (verdict.kind === 'park')
      log.warn('message parked', { ...describeFailure(failureOf(delivery, verdict)), reason: verdict.reason, parkingQueue: config.parkingQueue });
    return undefined;
  }

  /** Drains the credit: after the broker's answer nothing more arrives. */
  public async stopTaking(): Promise<Taken[]> {
    await this.receiver.stop();
    return this.takeBuffered();
  }

  public async finish(deadlines: { readonly hardStopAt: number }): Promise<void> {
    if (this.broken.signal.aborted) return;
    await this.writer.flushed();
    this.receiver.close();
    this.tally.parkedDepth(await this.management.parkedDepth(Math.min(PARKED_DEPTH_WAIT_MS, deadlines.hardStopAt - Date.now())));
  }

  public close(): Promise<void> {
    return this.broker.close();
  }

  /** A lost connection; when the broker ended the session over a message it cannot convert, that message is parked first. */
  public async failed(failure: Error): Promise<{ reason: 'connection-lost'; error: (summary: Summary) => Error }> {
    const { workQueue } = this.options.config;
    const swept = isUnconvertible(failure) ? await this.sweep() : '';
    return {
      reason: 'connection-lost',
      error: (summary) =>
        new PullAbortedError(
          `Invocation ended early: ${failure.message}. Unsettled messages went back to ${workQueue}; the next invocation carries on.${swept}`,
          summary,
          { cause: failure, reason: 'connection-lost' },
        ),
    };
  }

  private readonly takenOf = (received: Received | undefined): Taken | undefined => (received === undefined ? undefined : this.admit(received));

  private admit(received: Received): Taken {
    this.tally.receive();
    const { delivery, problem } = fromAmqp10(received.message);
    const record: NativeTaken = { index: -1, delivery, origin: problem === undefined ? this.origin : { ...this.origin, problem }, received };
    this.open.add(record);
    return record;
  }

  /**
   * The open record of `taken`: the record itself, as `take` gave it; or, for a Taken made elsewhere
   * (the hard stop's verdicts name the delivery), found by its delivery, a scan on that rare path only.
   * Undefined once settled.
   */
  private openRecordOf(taken: Taken): NativeTaken | undefined {
    if ('received' in taken) return this.open.has(taken as NativeTaken) ? (taken as NativeTaken) : undefined;
    return this.open.find((record) => record.delivery === taken.delivery);
  }

  /** Parks what the broker could not convert (see unconvertible-sweep.ts); says what it did, for the error. */
  private async sweep(): Promise<string> {
    const { config, log } = this.options;
    try {
      const parked = await sweepUnconvertible(config, log, config.batchSize);
      this.tally.receive(parked);
      for (let i = 0; i < parked; i++) this.tally.settle('parked');
      return ` The broker ended the session over a message it cannot convert to AMQP 1.0; ${parked} such message(s) at the head of ${config.workQueue} went to ${config.parkingQueue} as they were.`;
    } catch (error) {
      log.error('could not look for a message AMQP 1.0 cannot carry', { reason: (error as Error).message });
      return '';
    }
  }
}

/** What the summary counts a settlement as. */
function summaryOutcome(verdict: Verdict): SummaryOutcome {
  switch (verdict.kind) {
    case 'ack':
      return 'acked';
    case 'duplicate':
      return 'skippedDuplicates';
    case 'retry':
      return 'retried';
    case 'park':
      return 'parked';
    case 'defer':
      return 'deferred';
    case 'give-back':
      return 'requeued';
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
  const connectFromConfig = await connectFromConfigLate();
  const broker = await connectFromConfig(config, { connectionName: config.functionName }).catch(() => undefined);
  if (broker !== undefined) {
    const refusal = nativeBrokerRefusal(brokerVersionOf(broker.connection));
    await broker.close();
    if (refusal !== undefined) throw refusal;
  }
  throw error;
}

export { openNative, runNativePull };
