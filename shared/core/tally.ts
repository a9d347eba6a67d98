import type { Delivery } from '../message/copy-message.js';
import type { AttemptTracer } from '../observability/attempt-tracer.js';
import { emptySummary, type Outcome, type StopReason, type Summary } from '../observability/summary.js';
import { AttemptSpans } from './attempt-spans.js';

/** Stop reasons that end an invocation by failure: they replace the reason the loop stopped taking for. */
type FailureReason = Extract<StopReason, 'connection-lost' | 'channel-closed' | 'publish-failed'>;

/**
 * The one writer of an invocation's summary: the ledger (pull), the settlers (event) and the
 * lifecycle count through it, and the mode reads the result once at the end. The first stop reason
 * stays, unless a failure (a lost connection, an unconfirmed copy) ended the invocation after it.
 * Each settlement is reported here once, so the attempt's span (`spans`, started by the lifecycle)
 * ends here too.
 */
class Tally {
  /** The attempts' spans: the lifecycle starts them, each settlement counted here ends its own. */
  public readonly spans: AttemptSpans;
  /** `spans.on`, read once: with tracing off a settlement costs one check more than the count. */
  private readonly traced: boolean;
  private readonly summary: Summary = emptySummary();
  private stopSet = false;
  /** Unrounded: the summary holds it in whole milliseconds. */
  private pacedMs = 0;

  /** @param tracer the container's tracer. @default noTracer: tracing off */
  public constructor(tracer?: AttemptTracer) {
    this.spans = new AttemptSpans(tracer);
    this.traced = this.spans.on;
  }

  /** The counts so far, live (reports and tests read it; only the tally writes it). */
  public get current(): Readonly<Summary> {
    return this.summary;
  }

  /** Deliveries taken so far. */
  public get received(): number {
    return this.summary.received;
  }

  /** Deliveries given back untouched so far. */
  public get requeued(): number {
    return this.summary.requeued;
  }

  public receive(count = 1): void {
    this.summary.received += count;
  }

  /**
   * Counts how a delivery was settled and ends its attempt's span; `failure` says why the settlement
   * went wrong (the copy was not confirmed, so the message went back). No `delivery`: counted only.
   */
  public settle(outcome: Outcome, delivery?: Delivery, failure?: string): void {
    this.summary[outcome]++;
    if (this.traced && delivery !== undefined) this.spans.settled(delivery, outcome, failure);
  }

  /** The delivery's settlement failed and nothing was done with it here (event: the batch comes back whole); not counted. */
  public unsettled(delivery: Delivery, failure: string): void {
    if (this.traced) this.spans.settled(delivery, undefined, failure);
  }

  /** A handler ran unguarded (idempotency on, no key); also counted as `acked`. */
  public unkeyed(): void {
    this.summary.withoutIdempotencyKey++;
  }

  /** Why the invocation stopped taking messages: the first reason given stays. */
  public stop(reason: StopReason): void {
    if (this.stopSet) return;
    this.stopSet = true;
    this.summary.stoppedBecause = reason;
  }

  /** The invocation failed: this reason replaces any earlier one. */
  public fail(reason: FailureReason): void {
    this.stopSet = true;
    this.summary.stoppedBecause = reason;
  }

  /** A handler start waited `waitedMs` at the head of the rate limit's line (0: the invocation is paced, nothing waited yet). */
  public paced(waitedMs: number): void {
    this.pacedMs += waitedMs;
    this.summary.pacedMs = Math.round(this.pacedMs);
  }

  public breakerOpened(opened: boolean): void {
    this.summary.breakerOpened = opened;
  }

  /** The queue is paused until `untilMs` (epoch ms): the latest time told stays. */
  public paused(untilMs: number): void {
    const until = new Date(untilMs).toISOString();
    if (this.summary.pausedUntil === undefined || this.summary.pausedUntil < until) this.summary.pausedUntil = until;
  }

  public parkedDepth(depth: number | undefined): void {
    this.summary.parkedDepth = depth;
  }

  /** The summary with its duration; the tally is not written after this. Spans still open end as not settled. */
  public finish(startedAt: number): Summary {
    // Idle while a handler's answer paused the queue (perhaps after the last take): the pause is why it stopped, in every mode.
    if (this.summary.stoppedBecause === 'idle' && this.summary.pausedUntil !== undefined) this.summary.stoppedBecause = 'paused';
    if (this.traced) this.spans.endAll(`not settled: the invocation ended (${this.summary.stoppedBecause})`);
    this.summary.durationMs = Date.now() - startedAt;
    return this.summary;
  }
}

export { Tally };
export type { FailureReason };
