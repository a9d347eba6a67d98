import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AttemptDeadlines, effectiveLimitMs, windowOf } from '../../shared/core/attempt-deadlines.js';

describe('windowOf', () => {
  it.each([
    { limitMs: 10, windowMs: 1 },
    { limitMs: 100, windowMs: 5 },
    { limitMs: 2500, windowMs: 125 },
    { limitMs: 20_000, windowMs: 1000 },
    { limitMs: 30_000, windowMs: 1000 },
    { limitMs: 900_000, windowMs: 1000 },
  ])('a limit of $limitMs ms shares deadlines over $windowMs ms', ({ limitMs, windowMs }) => {
    expect(windowOf(limitMs)).toBe(windowMs);
  });
});

describe('effectiveLimitMs', () => {
  it.each([
    { attemptTimeoutMs: undefined, takeWindowMs: 897_000, limitMs: 30_000, why: 'unset, in a 15-minute function: 30 s' },
    { attemptTimeoutMs: undefined, takeWindowMs: 57_000, limitMs: 28_500, why: 'unset, in a 60 s function: half the take window' },
    { attemptTimeoutMs: undefined, takeWindowMs: 5000, limitMs: 2500, why: 'unset, with a budget of 8 s and the 3 s margin' },
    { attemptTimeoutMs: undefined, takeWindowMs: 1, limitMs: 1, why: 'unset, never 0' },
    { attemptTimeoutMs: 40_000, takeWindowMs: 57_000, limitMs: 40_000, why: 'set: kept past half the take window' },
    { attemptTimeoutMs: 120_000, takeWindowMs: 57_000, limitMs: 120_000, why: "set past the stop: as given (the budget's stop cuts the attempt off)" },
  ])('$why: $limitMs ms', ({ attemptTimeoutMs, takeWindowMs, limitMs }) => {
    expect(effectiveLimitMs(attemptTimeoutMs, takeWindowMs)).toBe(limitMs);
  });
});

describe('AttemptDeadlines', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fails a call that never settles with HandlerTimeoutError at its deadline, and aborts its signal first', async () => {
    // Prepare
    const deadlines = new AttemptDeadlines(1000, new AbortController().signal, 'fn');
    const window = deadlines.current();
    const bound = deadlines.bound(new Promise<void>(() => undefined), window) as Promise<void>;
    const outcome = bound.then(
      () => 'resolved',
      (error: Error & { timeoutMs?: number }) => error,
    );
    // Act
    await vi.advanceTimersByTimeAsync(1049);
    const abortedEarly = window.context.signal.aborted;
    await vi.advanceTimersByTimeAsync(1);
    // Assess: deadline = the window (50 ms) + the limit
    expect(abortedEarly).toBe(false);
    expect(window.context.signal.aborted).toBe(true);
    expect((window.context.signal.reason as Error).name).toBe('HandlerTimeoutError');
    const error = (await outcome) as Error & { timeoutMs: number; retryable: boolean };
    expect(error.name).toBe('HandlerTimeoutError');
    expect(error.timeoutMs).toBe(1000);
    expect(error.retryable).toBe(true);
    deadlines.end();
  });

  it('records the timeout, not the AbortError of a handler that obeys its signal', async () => {
    // Prepare: the handler rejects as soon as its signal aborts
    const deadlines = new AttemptDeadlines(100, new AbortController().signal, 'fn');
    const window = deadlines.current();
    const obeying = new Promise<void>((_, reject) => window.context.signal.addEventListener('abort', () => reject(new Error('AbortError'))));
    const outcome = (deadlines.bound(obeying, window) as Promise<void>).catch((error: Error) => error.name);
    // Act
    await vi.advanceTimersByTimeAsync(105);
    // Assess
    await expect(outcome).resolves.toBe('HandlerTimeoutError');
    deadlines.end();
  });

  it('passes on what a call settles with before its deadline, and ignores what it does after', async () => {
    // Prepare
    const deadlines = new AttemptDeadlines(100, new AbortController().signal, 'fn');
    const window = deadlines.current();
    let settleLate: (value: string) => void = () => undefined;
    const late = deadlines.bound(new Promise<string>((resolve) => (settleLate = resolve)), window) as Promise<string>;
    const early = deadlines.bound(Promise.resolve('done'), window);
    const lateOutcome = late.catch((error: Error) => error.name);
    // Act
    await vi.advanceTimersByTimeAsync(200);
    settleLate('too late');
    // Assess
    await expect(early).resolves.toBe('done');
    await expect(lateOutcome).resolves.toBe('HandlerTimeoutError');
    deadlines.end();
  });

  it('passes a synchronous result through, and a rejection as it came', async () => {
    // Prepare
    const deadlines = new AttemptDeadlines(100, new AbortController().signal, 'fn');
    const window = deadlines.current();
    // Act
    const sync = deadlines.bound(undefined, window);
    const failed = deadlines.bound(Promise.reject(new Error('partner 503')), window) as Promise<void>;
    // Assess
    expect(sync).toBeUndefined();
    await expect(failed).rejects.toThrow('partner 503');
    deadlines.end();
  });

  it('shares a deadline within a window and starts a new one after it', () => {
    // Prepare
    const deadlines = new AttemptDeadlines(1000, new AbortController().signal, 'fn');
    // Act
    const first = deadlines.current(0);
    const same = deadlines.current(49);
    const next = deadlines.current(50);
    // Assess
    expect(same).toBe(first);
    expect(next).not.toBe(first);
    deadlines.end();
  });

  it("aborts each window's signal with the budget's", () => {
    // Prepare
    const budget = new AbortController();
    const deadlines = new AttemptDeadlines(1000, budget.signal, 'fn');
    const window = deadlines.current();
    // Act
    budget.abort(new Error('invocation budget exhausted'));
    // Assess
    expect(window.context.signal.aborted).toBe(true);
    expect(window.context.functionName).toBe('fn');
    deadlines.end();
  });

  it('leaves no timer behind at end()', () => {
    // Prepare
    const deadlines = new AttemptDeadlines(1000, new AbortController().signal, 'fn');
    deadlines.current(0);
    deadlines.current(100);
    // Act
    deadlines.end();
    // Assess
    expect(vi.getTimerCount()).toBe(0);
  });
});
