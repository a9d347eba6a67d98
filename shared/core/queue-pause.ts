/**
 * The pause of one invocation's queue: a partner said "slow down" (a handler's error or a rule asked
 * for it: `pauseMs` of the retry decision), or an earlier invocation did (its marker on the broker,
 * read at the start). While it holds, the lifecycle starts no handler and defers what it is handed
 * for the pause's remaining time. A later pause extends it; none shortens it.
 */
import type { Logger } from '../observability/logger.js';
import type { Tally } from './tally.js';
import type { Verdict } from './verdict.js';

/** A pause a handler's answer asked for: until when, and whose answer it was. */
type PauseStart = {
  /** Epoch ms. */
  readonly untilMs: number;
  /** The queue of the message that got the answer (event mode: its record's queue). */
  readonly queue: string;
  readonly errorName: string;
  readonly messageId: string | undefined;
};

/** Where a pause comes from and goes to: the lifecycle's options. */
type PauseParts = {
  /** Epoch ms of a pause an earlier invocation started (its marker). @default none */
  readonly pausedUntil?: number;
  /** Told each pause a handler's answer starts or extends (the mode writes the marker). @default none */
  readonly onPause?: (pause: PauseStart) => void;
  /** Told the pause, for the summary. */
  readonly tally: Pick<Tally, 'paused'>;
};

class QueuePause {
  private untilMs: number;
  /** The latest pause asked for in this invocation; undefined when none was (a marker's pause at most). */
  private asked: PauseStart | undefined;
  private deferredCount = 0;

  public constructor(private readonly parts: PauseParts) {
    this.untilMs = parts.pausedUntil ?? 0;
    if (this.holds()) parts.tally.paused(this.untilMs);
  }

  /** Epoch ms the pause lasts until (in the past, or 0: no pause). */
  public get until(): number {
    return this.untilMs;
  }

  /** Read for every message: without a pause, no clock is read. */
  public holds(nowMs?: number): boolean {
    return this.untilMs !== 0 && (nowMs ?? Date.now()) < this.untilMs;
  }

  /** What is left of the pause, in ms (0 once over). */
  public remainingMs(nowMs: number = Date.now()): number {
    return Math.max(0, this.untilMs - nowMs);
  }

  /**
   * A handler's answer asks to pause until `start.untilMs`: unless the pause already lasts longer, it
   * does, the summary says so and the mode is told (to mark it on the broker).
   */
  public ask(start: PauseStart): void {
    if (start.untilMs <= this.untilMs) return;
    this.untilMs = start.untilMs;
    this.asked = start;
    this.parts.tally.paused(start.untilMs);
    this.parts.onPause?.(start);
  }

  /** Counts `verdict`, the verdict of a message untried for the pause, when it defers; returns it. */
  public counted(verdict: Verdict): Verdict {
    if (verdict.kind === 'defer') this.deferredCount++;
    return verdict;
  }

  /**
   * The one warning of an invocation in which a handler's answer paused the queue, with how many
   * messages it deferred; written when the invocation's lifecycle ends. A pause only found (a marker) says nothing here.
   */
  public report(log: Logger): void {
    if (this.asked === undefined) return;
    const { queue, errorName, messageId } = this.asked;
    const until = new Date(this.untilMs).toISOString();
    log.warn(`partner asked to slow down: queue paused until ${until}, ${this.deferredCount} messages deferred`, {
      queue,
      pausedUntil: until,
      deferred: this.deferredCount,
      errorName,
      messageId,
    });
  }
}

export { QueuePause };
export type { PauseParts, PauseStart };
