import { describe, expect, it } from 'vitest';
import { allowedConcurrency, recordOutcome, startBreaker, type Breaker, type BreakerOutcome, type BreakerState } from '../../shared/core/circuit-breaker.js';

const S: BreakerOutcome = 'success';
const F: BreakerOutcome = 'retryable-failure';
const U: BreakerOutcome = 'other-failure';

/** The breaker after a run of outcomes, from the start of an invocation. */
function after(threshold: number, outcomes: readonly BreakerOutcome[]): Breaker {
  return outcomes.reduce(recordOutcome, startBreaker(threshold));
}

describe('startBreaker', () => {
  it.each<[number, BreakerState]>([
    [10, 'half-open'],
    [1, 'half-open'],
    [0, 'disabled'],
  ])('starts an invocation with threshold %i %s', (threshold, state) => {
    expect(startBreaker(threshold)).toEqual({ state, failuresInARow: 0, threshold });
  });
});

describe('recordOutcome', () => {
  it.each<[string, number, BreakerOutcome[], BreakerState, number]>([
    ['a first success closes it', 3, [S], 'closed', 0],
    ['failures below the threshold keep it half-open', 3, [F, F], 'half-open', 2],
    ['the threshold-th failure in a row opens it', 3, [F, F, F], 'open', 3],
    ['a threshold of 1 opens on the first failure', 1, [F], 'open', 1],
    ['a success resets the run', 3, [F, F, S, F, F], 'closed', 2],
    ['failures in a row after a success open it', 3, [S, F, F, F], 'open', 3],
    ['an unrecoverable error neither counts nor resets', 3, [F, U, F, U], 'half-open', 2],
    ['an unrecoverable error does not close a half-open breaker', 3, [U, U, U, U], 'half-open', 0],
    ['open is final for the invocation: a late success changes nothing', 2, [F, F, S], 'open', 2],
    ['open is final: later failures are not counted', 2, [F, F, F, F], 'open', 2],
    ['disabled never opens', 0, [F, F, F, F, F, F, F, F, F, F, F, F], 'disabled', 0],
    ['a threshold above the messages present never opens', 50, Array<BreakerOutcome>(20).fill(F), 'half-open', 20],
  ])('%s', (_name, threshold, outcomes, state, failuresInARow) => {
    // Act
    const breaker = after(threshold, outcomes);
    // Assess
    expect(breaker).toEqual({ state, failuresInARow, threshold });
  });

  it('returns a new breaker and leaves the old one as it was', () => {
    // Prepare
    const before = startBreaker(2);
    // Act
    const next = recordOutcome(before, F);
    // Assess
    expect(before.failuresInARow).toBe(0);
    expect(next).not.toBe(before);
  });

  it('returns the same breaker for a success that changes nothing (closed, no failures in a row): no object per message', () => {
    // Prepare
    const closed = recordOutcome(startBreaker(2), S);
    // Act
    const next = recordOutcome(closed, S);
    // Assess
    expect(next).toBe(closed);
    expect(next).toEqual({ state: 'closed', failuresInARow: 0, threshold: 2 });
  });
});

describe('allowedConcurrency', () => {
  it.each<[BreakerOutcome[], number, number]>([
    [[], 10, 1],
    [[S], 10, 8],
    [[F, F], 10, 1],
    [[F, F, F, F, F, F, F, F, F, F], 10, 0],
    [[F, F, F], 0, 8],
  ])('after %j with threshold %i lets %i handler calls run at once (CONCURRENCY 8)', (outcomes, threshold, expected) => {
    expect(allowedConcurrency(after(threshold, outcomes), 8)).toBe(expected);
  });
});
