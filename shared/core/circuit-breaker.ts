/**
 * The retry-storm guard, as a pure state machine. The function keeps no state between invocations,
 * so every invocation starts half-open: it tries one message at a time until the first success
 * closes the breaker (full concurrency). A run of `threshold` retryable failures in a row opens it,
 * and it stays open for the rest of the invocation: no more handler calls, the next invocation
 * probes again.
 *
 * | state     | concurrency   | success          | retryable failure              | other failure |
 * |-----------|---------------|------------------|--------------------------------|---------------|
 * | half-open | 1             | closed, run 0    | run + 1; open at the threshold | unchanged     |
 * | closed    | CONCURRENCY   | run 0            | run + 1; open at the threshold | unchanged     |
 * | open      | 0             | unchanged        | unchanged                      | unchanged     |
 * | disabled  | CONCURRENCY   | unchanged        | unchanged                      | unchanged     |
 *
 * "Other failure" is an error with `retryable === false`: the partner answered (or the message is
 * bad), so it neither proves nor disproves an outage. So is a failure that pauses the queue (the
 * partner said "slow down", core/pause.ts): the partner is up, and the pause is the answer to it. With the partner down and a threshold of 10,
 * an invocation calls the handler exactly 10 times, one after the other.
 */

/** Where the breaker stands. `disabled` (threshold 0) never opens. */
type BreakerState = 'half-open' | 'closed' | 'open' | 'disabled';

/** What the handler's attempt came to, as far as the breaker cares. */
type BreakerOutcome = 'success' | 'retryable-failure' | 'other-failure';

/** The breaker's state within one invocation. */
type Breaker = {
  readonly state: BreakerState;
  /** Retryable failures in a row since the last success (or the start). */
  readonly failuresInARow: number;
  /** `BREAKER_THRESHOLD`: failures in a row that open it. */
  readonly threshold: number;
};

/**
 * The breaker at the start of an invocation: half-open, or disabled when `threshold` is 0.
 * @example startBreaker(10) // { state: 'half-open', failuresInARow: 0, threshold: 10 }
 */
function startBreaker(threshold: number): Breaker {
  return { state: threshold > 0 ? 'half-open' : 'disabled', failuresInARow: 0, threshold };
}

/** The breaker after one attempt's outcome. Open is final for the invocation. */
function recordOutcome(breaker: Breaker, outcome: BreakerOutcome): Breaker {
  if (breaker.state === 'open' || breaker.state === 'disabled' || outcome === 'other-failure') return breaker;
  if (outcome === 'success') {
    // The success path's common case, every message: the same breaker, no new object.
    if (breaker.state === 'closed' && breaker.failuresInARow === 0) return breaker;
    return { ...breaker, state: 'closed', failuresInARow: 0 };
  }
  const failuresInARow = breaker.failuresInARow + 1;
  return { ...breaker, failuresInARow, state: failuresInARow >= breaker.threshold ? 'open' : breaker.state };
}

/** How many handler calls may run at once: 1 while half-open (a probe), none once open. */
function allowedConcurrency(breaker: Breaker, concurrency: number): number {
  if (breaker.state === 'open') return 0;
  return breaker.state === 'half-open' ? 1 : concurrency;
}

export { allowedConcurrency, recordOutcome, startBreaker };
export type { Breaker, BreakerOutcome, BreakerState };
