import type { Clock } from '../../shared/core/turn-line.js';

type Timer = { readonly at: number; readonly callback: () => void };

/** Lets the promise reactions queued so far run, and those they queue (a few real macrotask turns). */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * A clock whose time moves only when the test says: `advance` fires each timer at its time, in order,
 * as an idle event loop would; `stall` moves the time without firing anything, as a blocked event loop
 * (a long GC, a CPU-starved container) would, and the timers due then fire together at `advance(0)`.
 * @example const clock = new FakeClock(); const line = new TurnLine(gate, clock); await clock.advance(1000);
 */
class FakeClock implements Clock {
  private time = 0;
  private timers: Timer[] = [];

  public now(): number {
    return this.time;
  }

  public setTimeout(callback: () => void, ms: number): unknown {
    // Node waits at least 1 ms.
    const timer = { at: this.time + Math.max(1, ms), callback };
    this.timers.push(timer);
    return timer;
  }

  public clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((timer) => timer !== handle);
  }

  /** Timers not yet fired. */
  public get pending(): number {
    return this.timers.length;
  }

  /** Moves on by `ms`, firing each timer due on the way at its own time (and what they set in turn). */
  public async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    await settle();
    for (;;) {
      const due = this.timers.filter((timer) => timer.at <= end).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((timer) => timer !== due);
      this.time = Math.max(this.time, due.at);
      due.callback();
      await settle();
    }
    this.time = end;
  }

  /** Moves on by `ms` without firing a timer: the event loop was blocked all that time. */
  public stall(ms: number): void {
    this.time += ms;
  }
}

export { FakeClock, settle };
