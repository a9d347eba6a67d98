/**
 * The line of handler starts waiting for their turn under a rate limit, in the order they asked.
 *
 * One timer serves the whole line: only its head waits, and the gate is asked again when the timer
 * fires, at that moment. A reservation per waiter (each its own slot, each its own timer) would go
 * wrong after an event-loop stall (a long GC, a CPU-starved container): every timer due during the
 * stall fires in the same turn, and the starts they stand for go out in one burst. Here a stall only
 * delays: after it the head goes, and the next waits a full interval from then.
 */

/** How the line tells time: milliseconds, never going back. Tests pass a fake. */
type Clock = {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
};

/**
 * Whether the head of the line may start: given the time now and when the line last let one go
 * (`-Infinity` before the first), 0 takes the start (the gate counts it taken), a positive number is
 * how long until one may be. A promise when a store answers; it must not reject.
 */
type Gate = (nowMs: number, lastStartMs: number) => number | Promise<number>;

type Waiter = { readonly resolve: (headMs: number | undefined) => void; readonly signal: AbortSignal };

/** The process's monotonic clock and timers. */
const SYSTEM_CLOCK: Clock = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * A line that lets one start go at a time, when `gate` says so.
 * @example const line = new TurnLine((now, last) => Math.max(0, last + 100 - now)); await line.turn(signal); // 10 a second
 */
class TurnLine {
  private readonly waiting: Waiter[] = [];
  private timer: unknown;
  private asking = false;
  private lastStart = Number.NEGATIVE_INFINITY;
  /** When the current head became the head: what it waited at the head is its share of the pacing. */
  private headSince = 0;
  private readonly watched = new WeakSet<AbortSignal>();

  public constructor(
    private readonly gate: Gate,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /**
   * Resolves once this start may go, with how long it waited at the head of the line (the time the
   * limit held the line back, summed over the starts, is never more than the time that passed), or
   * with `undefined` when `signal` aborted first: it then leaves the line and does not start.
   */
  public turn(signal: AbortSignal): Promise<number | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    this.watch(signal);
    return new Promise((resolve) => {
      if (this.waiting.push({ resolve, signal }) === 1) this.headSince = this.clock.now();
      this.next();
    });
  }

  /** How many starts are waiting. */
  public get length(): number {
    return this.waiting.length;
  }

  /** Asks the gate for the head, unless an answer or the timer is pending; lets heads go while it says 0. */
  private next(): void {
    while (!this.asking && this.timer === undefined && this.waiting.length > 0) {
      const answer = this.gate(this.clock.now(), this.lastStart);
      if (typeof answer !== 'number') {
        this.asking = true;
        // A gate that broke its word and rejected lets the head go: a limit must never stop the queue.
        void answer
          .then(
            (waitMs) => waitMs,
            () => 0,
          )
          .then((waitMs) => {
            this.asking = false;
            this.answered(waitMs);
            this.next();
          });
        return;
      }
      this.answered(answer);
    }
  }

  private answered(waitMs: number): void {
    if (waitMs > 0) {
      if (this.waiting.length > 0)
        this.timer = this.clock.setTimeout(() => {
          this.timer = undefined;
          this.next();
        }, waitMs);
      return;
    }
    // A start was taken: the head now goes, whoever it is (the one it was asked for may have left;
    // with nobody left it goes unused, which only slows).
    const head = this.waiting.shift();
    const now = this.clock.now();
    this.lastStart = now;
    if (head === undefined) return;
    head.resolve(now - this.headSince);
    this.headSince = now;
  }

  /** One listener per signal (every start of an invocation shares its lifecycle's), not one per waiter. */
  private watch(signal: AbortSignal): void {
    if (this.watched.has(signal)) return;
    this.watched.add(signal);
    signal.addEventListener('abort', () => this.leave(signal), { once: true });
  }

  /** The waiters of an aborted signal leave the line; an empty line stops its timer. */
  private leave(signal: AbortSignal): void {
    const head = this.waiting[0];
    const leaving = this.waiting.filter((waiter) => waiter.signal === signal);
    this.waiting.splice(0, this.waiting.length, ...this.waiting.filter((waiter) => waiter.signal !== signal));
    for (const waiter of leaving) waiter.resolve(undefined);
    if (this.waiting[0] !== head) this.headSince = this.clock.now();
    if (this.waiting.length === 0 && this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }
}

export { SYSTEM_CLOCK, TurnLine };
export type { Clock, Gate };
