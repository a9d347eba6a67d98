/**
 * The waits of a delivery between its admission and its handler's start, in order: a partner's pause
 * that ends before the budget's stop is waited out (so that what the invocation holds is tried, not
 * copied), then the rate limit's turn (core/pacer.ts). Either wait ends early when the invocation
 * stops for good or its budget ends (`leaveLine`); the lifecycle (core/attempt.ts) then gives the
 * delivery its verdict for an untried message.
 */
import type { Pacer } from './pacer.js';
import type { Pause } from './pause.js';
import type { Tally } from './tally.js';

class StartLine {
  public constructor(
    private readonly parts: {
      readonly pause: Pause;
      /** Paces the handler starts; undefined: no rate limit. */
      readonly pacer: Pacer | undefined;
      /** The budget's stop (epoch ms): a pause that outlasts it is not waited out. */
      readonly stopAt: number;
      /** Aborted at the budget's stop or when the invocation stops for good: every wait ends. */
      readonly leaveLine: AbortSignal;
      readonly tally: Tally;
      /** True once the invocation stopped (paused past its stop, the breaker open, the store down). */
      readonly stopped: () => boolean;
    },
  ) {}

  /** Whether a delivery admitted now has to wait before its start: a pause holds, or the starts are paced. */
  public get waits(): boolean {
    return this.parts.pause.holds() || this.parts.pacer !== undefined;
  }

  /**
   * Waits out the pause, then takes the rate limit's turn (none is spent once the invocation stopped:
   * the start that follows finds it stopped). A pause that came while it waited for its turn (another
   * message's answer) is waited out too, and a new turn taken after it: the starts held by a pause
   * resume at the limit's pace. Resolves false when the delivery left the line first.
   * @example if (!(await line.wait())) return untried;
   */
  public async wait(): Promise<boolean> {
    const { pause, pacer, stopAt, leaveLine, stopped } = this.parts;
    for (;;) {
      if (pause.holds() && !stopped() && !(await pause.waitOut(stopAt, leaveLine))) return false;
      if (pacer === undefined || stopped()) return true;
      const waitedMs = await pacer.turn(leaveLine);
      if (waitedMs === undefined) return false;
      this.parts.tally.paced(waitedMs);
      if (!pause.holds()) return true;
    }
  }
}

export { StartLine };
