/**
 * The time limit of each attempt (`attemptTimeoutMs`): at its deadline the attempt's `signal` aborts
 * and the attempt fails with `HandlerTimeoutError`, whether or not the handler ever settles, so that
 * one hung call cannot hold a concurrency slot (or the one slot of the half-open start) to the budget's end.
 *
 * Attempts that start within one short window share a deadline: one AbortController, one timer and
 * one context per window rather than per attempt, which would cost the success path an AbortController,
 * a timer and an event listener per message. An attempt is therefore cut off between the limit and
 * the limit plus one window (`windowOf`: a twentieth of the limit, at most 1 s).
 */
import { DEFAULT_ATTEMPT_TIMEOUT_MS } from '../config/option-table.js';
import { HandlerTimeoutError } from '../errors.js';
import type { HandlerContext } from '../message/message.js';
import { LiveList } from '../live-list.js';

/** The attempts started in one window: their shared context, and those still running. */
type Window = {
  readonly startedAt: number;
  readonly context: HandlerContext;
  readonly controller: AbortController;
  readonly running: LiveList<Running>;
  timer?: NodeJS.Timeout;
};

type Running = { index: number; readonly reject: (error: unknown) => void };

/**
 * How long the attempts that share a deadline may start apart: a twentieth of the limit (5 % late at
 * most), at least 1 ms, at most 1 s.
 * @example windowOf(30_000) // 1000
 */
function windowOf(limitMs: number): number {
  return Math.min(1000, Math.max(1, Math.floor(limitMs / 20)));
}

/**
 * The limit an invocation applies. Unset (`attemptTimeoutMs` undefined): 30 s, but at most half the
 * time the invocation takes messages (`takeWindowMs`), so that a first attempt that hangs still leaves
 * time for the others. Set: as given; an attempt that reaches the invocation's stop first is cut off by the budget.
 * @example effectiveLimitMs(undefined, 5000) // 2500
 */
function effectiveLimitMs(attemptTimeoutMs: number | undefined, takeWindowMs: number): number {
  return attemptTimeoutMs ?? Math.max(1, Math.min(DEFAULT_ATTEMPT_TIMEOUT_MS, Math.floor(takeWindowMs / 2)));
}

/**
 * The deadlines of one invocation's attempts.
 * @example
 * const deadlines = new AttemptDeadlines(limitMs, budgetSignal, 'boomerang-orders-pull');
 * const window = deadlines.current();
 * await deadlines.bound(handler(message, window.context), window);
 */
class AttemptDeadlines {
  private readonly windowMs: number;
  private window: Window | undefined;
  private readonly open = new Set<Window>();

  public constructor(
    public readonly limitMs: number,
    private readonly budget: AbortSignal,
    private readonly functionName: string,
  ) {
    this.windowMs = windowOf(limitMs);
  }

  /** The window an attempt starting now belongs to (a new one once the last is `windowMs` old). */
  public current(now = Date.now()): Window {
    const window = this.window;
    if (window !== undefined && now - window.startedAt < this.windowMs) return window;
    const controller = new AbortController();
    const next: Window = {
      startedAt: now,
      controller,
      context: Object.freeze({ signal: AbortSignal.any([this.budget, controller.signal]), functionName: this.functionName }),
      running: new LiveList(),
    };
    next.timer = setTimeout(() => this.expire(next), this.windowMs + this.limitMs);
    this.open.add(next);
    this.window = next;
    return next;
  }

  /**
   * `work`, or a `HandlerTimeoutError` at its window's deadline, whichever comes first; what `work`
   * does later is ignored. A result that is no promise (a synchronous handler) passes through.
   */
  public bound<T>(work: T | PromiseLike<T>, window: Window): T | Promise<T> {
    if (!isThenable(work)) return work;
    return new Promise<T>((resolve, reject) => {
      const running: Running = { index: -1, reject };
      window.running.add(running);
      work.then(
        (value) => {
          window.running.remove(running);
          resolve(value);
        },
        (error: unknown) => {
          window.running.remove(running);
          reject(error);
        },
      );
    });
  }

  /** Clears every timer: the invocation is over (its budget signal aborts the handlers still running). */
  public end(): void {
    for (const window of this.open) clearTimeout(window.timer);
    this.open.clear();
    this.window = undefined;
  }

  private expire(window: Window): void {
    this.open.delete(window);
    if (this.window === window) this.window = undefined;
    // The signal first, so that a handler that obeys it learns why; the rejection below decides the
    // attempt's outcome before that handler's own AbortError can.
    window.controller.abort(new HandlerTimeoutError(this.limitMs));
    for (const running of window.running.drain()) running.reject(new HandlerTimeoutError(this.limitMs));
  }
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof value === 'object' && value !== null && typeof (value as PromiseLike<T>).then === 'function';
}

export { AttemptDeadlines, effectiveLimitMs, isThenable, windowOf };
