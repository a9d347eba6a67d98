/** What one invocation did; printed as the last stdout line locally, returned by the cloud handler. */
type Summary = {
  /** Deliveries taken from the work queue: always `acked + retried + parked + requeued + lost + deferred + skippedDuplicates`. */
  received: number;
  /** Handled successfully and acked. */
  acked: number;
  /** Re-published to the delay path (confirmed), then acked. */
  retried: number;
  /** Published to the parking lot (confirmed), then acked. */
  parked: number;
  /** Returned to the work queue untouched: not handled in time, or its copy was not confirmed. */
  requeued: number;
  /** Only with ACK_ORDER=ack-then-publish: acked, then neither copy could be published. */
  lost: number;
  /**
   * Not tried because the circuit breaker opened, because the queue is paused (the partner said "slow
   * down"), because the idempotency guard could not run it (its key is held by another run, or the
   * store failed), or because the invocation had no time left for it on a broker where a give-back
   * raises `x-delivery-count` (3.x, 4.0-4.2): sent to the delay path with the retry count it came with
   * (no attempt is counted), then acked.
   */
  deferred: number;
  /**
   * Idempotency on: the message's key had completed in an earlier run, so it was acked without calling
   * the handler (a duplicate whose effect was not repeated).
   */
  skippedDuplicates: number;
  /**
   * Idempotency on: handler runs that succeeded on a message without a key (no messageId, or the key
   * function gave none), so unguarded. Not an outcome: these are also counted as `acked`.
   */
  withoutIdempotencyKey: number;
  /** The circuit breaker opened: BREAKER_THRESHOLD retryable failures in a row. */
  breakerOpened: boolean;
  durationMs: number;
  /**
   * Messages in the function's parking lot when the invocation ended (the `parkedDepth` metric the
   * stack alarms on); undefined when the invocation failed or the depth could not be read.
   */
  parkedDepth?: number;
  /**
   * With a rate limit only: how long, in the invocation, messages waited for their turn under it (the
   * time the line of handler starts was held back; never more than `durationMs`). Close to
   * `durationMs`: the limit set the pace, not the handler or the queue.
   */
  pacedMs?: number;
  /**
   * ISO time until which the queue is paused, when it was during the invocation: a handler's error
   * (or a rule) asked for it here, or an earlier invocation did (its marker on the broker). Absent: not paused.
   */
  pausedUntil?: string;
  /** Why the invocation stopped taking messages. */
  stoppedBecause: StopReason;
};

/** Why an invocation stopped taking messages. */
type StopReason =
  | 'idle'
  | 'max-messages'
  | 'budget'
  | 'consumer-cancelled'
  | 'connection-lost'
  | 'channel-closed'
  | 'publish-failed'
  | 'breaker-open'
  /** The partner said "slow down" (here, or an earlier invocation): what was held was deferred, and no more was taken. */
  | 'paused'
  /** The idempotency store failed for several messages in a row: they were deferred, and no more were taken. */
  | 'idempotency-store-down'
  /** Nothing was taken: the configuration is invalid (the error names the variable). */
  | 'config-error'
  /** Nothing was taken: the broker could not be reached or refused the login. */
  | 'connect-failed'
  /** Nothing was taken: the delay path or parking lot of the current config is missing on the broker. */
  | 'topology-drift'
  /** Nothing was taken: any other error before the first message. */
  | 'failed';

/** What became of one delivery: each is a counter of the summary. */
type Outcome = 'acked' | 'retried' | 'parked' | 'requeued' | 'lost' | 'deferred' | 'skippedDuplicates';

/** The counters of a summary, in the order reports print them. */
const SUMMARY_COUNTS = ['received', 'acked', 'retried', 'parked', 'requeued', 'lost', 'deferred', 'skippedDuplicates'] as const;

/** A summary with every count at 0. */
function emptySummary(): Summary {
  return {
    received: 0,
    acked: 0,
    retried: 0,
    parked: 0,
    requeued: 0,
    lost: 0,
    deferred: 0,
    skippedDuplicates: 0,
    withoutIdempotencyKey: 0,
    breakerOpened: false,
    durationMs: 0,
    stoppedBecause: 'idle',
  };
}

export { emptySummary, SUMMARY_COUNTS };
export type { Outcome, StopReason, Summary };
