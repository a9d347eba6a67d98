/**
 * The native transport (`delayMode: 'native'`, RabbitMQ 4.3+) as the invocation sees it: the work
 * queue's AMQP 1.0 receiver, each verdict settled with one AMQP 1.0 outcome that the broker carries
 * out (native-annotations.ts). Opened by native-pull.ts.
 */
import { describeFailure, failureOf } from '../copy/failure.js';
import type { InvocationOptions } from '../core/invocation.js';
import { PullAbortedError } from '../core/invocation-errors.js';
import type { Origin } from '../core/lifecycle-options.js';
import { type ModeSettings, nativeSettings } from '../core/mode-settings.js';
import type { Tally } from '../core/tally.js';
import type { Taken, Transport } from '../core/transport.js';
import type { Verdict } from '../core/verdict.js';
import { LiveList } from '../live-list.js';
import { type InvocationMetrics, noMetrics } from '../observability/metrics.js';
import type { Outcome as SummaryOutcome, Summary } from '../observability/summary.js';
import type { Amqp10Connection } from './amqp10-connection.js';
import { NativeAnnotation, amqp10Outcome } from './native-annotations.js';
import { fromAmqp10 } from './native-delivery.js';
import type { NativeManagement } from './native-management.js';
import type { NativeReceiver, Received } from './native-receiver.js';
import { SettlementWriter } from './settlement-writer.js';
import { isUnconvertible, sweepUnconvertible } from './unconvertible-sweep.js';

/** The longest the parking lot's depth is waited for at the end (one request takes about 1 ms). */
const PARKED_DEPTH_WAIT_MS = 1_000;

/** A message this transport took: the Taken it hands out, with rhea's delivery, in the open list until settled. */
type NativeTaken = Taken & { index: number; readonly received: Received };

/** Takes from the receiver and settles each verdict with its outcome; see the file's header. */
class NativeTransport implements Transport {
  // The retry count travels in an annotation (a header to the handler): RETRY_HEADER does not apply.
  public readonly retryHeader = NativeAnnotation.retryNo;
  public readonly settings: ModeSettings = nativeSettings(NativeAnnotation.failedSettlements);
  public readonly maxMessages: number;
  public readonly settleHoldsTurn = false;
  private readonly broken = new AbortController();
  private readonly lostSignal = this.broken.signal;
  private readonly writer: SettlementWriter;
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
    this.writer = new SettlementWriter(broker.output);
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

export { NativeTransport };
