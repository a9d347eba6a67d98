/**
 * The wait of a transport's `take` for its next delivery, bounded by a time: at most one taker
 * waits at a time. One timer serves every wait, left armed when a delivery ends a wait early, and
 * checks the wait's deadline when it fires: a timer armed and cleared per `take` showed in the pull
 * loop's CPU profile, where a consumer that keeps up waits once a message.
 * @example
 * const next = new TimedWait<Message>();
 * const message = await next.wait(150); // undefined after 150 ms with none
 * next.hand(message); // in the delivery callback: false when nobody waits (then buffer it)
 */
class TimedWait<T> {
  private waiter: ((value: T | undefined) => void) | undefined;
  /** When the current wait gives up (`Date.now()` time). */
  private deadline = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerDue = 0;

  /** Resolves with what `hand` gives, or with undefined after `timeoutMs` or at `end`. */
  public wait(timeoutMs: number): Promise<T | undefined> {
    return new Promise((resolve) => {
      this.waiter = resolve;
      this.deadline = Date.now() + Math.max(0, timeoutMs);
      if (this.timer === undefined || this.deadline < this.timerDue) this.arm(this.deadline);
    });
  }

  /** Ends the current wait with `value`; false when none was waiting. */
  public hand(value: T | undefined): boolean {
    const waiter = this.waiter;
    if (waiter === undefined) return false;
    this.waiter = undefined;
    waiter(value);
    return true;
  }

  /** Ends the current wait (if any) with undefined and drops the timer. */
  public end(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.hand(undefined);
  }

  private arm(due: number): void {
    clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => this.fired(), Math.max(0, due - Date.now()));
  }

  private fired(): void {
    this.timer = undefined;
    if (this.waiter === undefined) return;
    if (Date.now() < this.deadline) {
      this.arm(this.deadline);
      return;
    }
    this.hand(undefined);
  }
}

export { TimedWait };
