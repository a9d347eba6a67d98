import { emptySummary, type Outcome, type StopReason, type Summary } from '../observability/summary.js';

/** Stop reasons that end an invocation by failure: they replace the reason the loop stopped taking for. */
type FailureReason = Extract<StopReason, 'connection-lost' | 'channel-closed' | 'publish-failed'>;

/**
 * The one writer of an invocation's summary: the ledger (pull), the settlers (event) and the
 * lifecycle count through it, and the mode reads the result once at the end. The first stop reason
 * stays, unless a failure (a lost connection, an unconfirmed copy) ended the invocation after it.
 */
class Tally {
  private readonly summary: Summary = emptySummary();
  private stopSet = false;

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

  public settle(outcome: Outcome): void {
    this.summary[outcome]++;
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

  public breakerOpened(opened: boolean): void {
    this.summary.breakerOpened = opened;
  }

  public parkedDepth(depth: number | undefined): void {
    this.summary.parkedDepth = depth;
  }

  /** The summary with its duration; the tally is not written after this. */
  public finish(startedAt: number): Summary {
    this.summary.durationMs = Date.now() - startedAt;
    return this.summary;
  }
}

export { Tally };
export type { FailureReason };
