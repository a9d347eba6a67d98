/**
 * The pause of one invocation's queue: a partner said "slow down" (a handler's error or a rule asked
 * for it: `pauseMs` of the retry decision), or an earlier invocation did (its marker on the broker,
 * read when the invocation starts). While it holds, the lifecycle starts no handler. A pause that ends
 * before the invocation's stop is waited out: what the invocation holds is tried after it, never copied
 * (`waitOut`). A pause that outlasts the stop ends the invocation, and what it holds goes back untried
 * (core/attempt.ts says how). A later pause extends it; none shortens it.
 *
 * The pause outlives the invocation through its marker (amqp/pause-marker.ts: the marker's format and
 * its 0-9-1 adapter; native/amqp10-pause-marker.ts: its AMQP 1.0 adapter). Neither the read nor the
 * write may cost a message: a read that fails counts as no pause, and a write that fails leaves the
 * pause to this invocation alone (its held messages are deferred all the same); each says so in a warning.
 */
import type { PauseMarker, PauseStart } from '../amqp/pause-marker.js';
import type { Logger } from '../observability/logger.js';
import type { Tally } from './tally.js';
import type { Verdict } from './verdict.js';

/** Where a pause comes from and goes to. */
type PauseOptions = {
  /** Epoch ms of a pause an earlier invocation started (its marker). @default none */
  readonly pausedUntil?: number;
  /** The marker of a queue (event mode: each record's queue), written when a handler's answer starts or extends the pause. @default none: not marked */
  readonly markerOf?: (queue: string) => PauseMarker;
  /** The function's name, written in the marker. @default '' */
  readonly by?: string;
  readonly log: Logger;
  /** Told the pause, for the summary. */
  readonly tally: Pick<Tally, 'paused'>;
};

/**
 * @example
 * const pause = new Pause({ pausedUntil, markerOf: (queue) => amqp091PauseMarker(connection, queue), by: config.functionName, log, tally });
 * if (pause.holds()) ...; // in the lifecycle
 * await pause.written(1000); // at the end of the invocation
 */
class Pause {
  private untilMs: number;
  /** The latest pause asked for in this invocation; undefined when none was (a marker's pause at most). */
  private asked: PauseStart | undefined;
  private deferredCount = 0;
  private givenBackCount = 0;
  /** The waits of `waitOut`, woken when the pause is extended so that each checks the new end. */
  private readonly waiters = new Set<() => void>();
  /** The latest pause of each queue still to be marked, and the write under way. */
  private readonly pending = new Map<string, PauseStart>();
  private writing: Promise<void> | undefined;

  public constructor(private readonly options: PauseOptions) {
    this.untilMs = options.pausedUntil ?? 0;
    if (this.holds()) options.tally.paused(this.untilMs);
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
   * does, the summary says so, and it is marked on the broker soon (one write at a time: handlers
   * answered at once ask for several, and only the latest pause of each queue is written after the one in flight).
   */
  public ask(start: PauseStart): void {
    if (start.untilMs <= this.untilMs) return;
    this.untilMs = start.untilMs;
    this.asked = start;
    this.options.tally.paused(start.untilMs);
    for (const wake of [...this.waiters]) wake();
    if (this.options.markerOf === undefined) return;
    this.pending.set(start.queue, start);
    this.writing ??= this.writeAll();
  }

  /**
   * Waits while the pause holds, as long as it ends before `stopAt` (epoch ms): true once it is over,
   * false as soon as it lasts until `stopAt` or later (now, or extended meanwhile) or `signal` aborts.
   * Without a pause it resolves true at once.
   * @example if (!(await pause.waitOut(deadlines.stopTakingAt, signal))) return untried;
   */
  public async waitOut(stopAt: number, signal: AbortSignal): Promise<boolean> {
    while (this.holds()) {
      if (this.untilMs >= stopAt || signal.aborted) return false;
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          signal.removeEventListener('abort', wake);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, this.untilMs - Date.now());
        signal.addEventListener('abort', wake);
        this.waiters.add(wake);
      });
    }
    return true;
  }

  /** Counts `verdict`, the verdict of a message untried for the pause (deferred, or given back); returns it. */
  public counted(verdict: Verdict): Verdict {
    if (verdict.kind === 'defer') this.deferredCount++;
    else if (verdict.kind === 'give-back') this.givenBackCount++;
    return verdict;
  }

  /**
   * The one warning of an invocation in which a handler's answer paused the queue, with how many
   * messages the pause left untried (deferred, or given back); written when the invocation's lifecycle ends. A pause only found (a marker) says nothing here.
   */
  public report(): void {
    if (this.asked === undefined) return;
    const { queue, errorName, messageId } = this.asked;
    const until = new Date(this.untilMs).toISOString();
    this.options.log.warn(
      `partner asked to slow down: queue paused until ${until}, ${this.deferredCount} messages deferred, ${this.givenBackCount} given back untried`,
      {
        queue,
        pausedUntil: until,
        deferred: this.deferredCount,
        givenBack: this.givenBackCount,
        errorName,
        messageId,
      },
    );
  }

  /** Waits for the marker writes asked for so far, at most `waitMs`; what is not written by then holds for this invocation only. */
  public async written(waitMs: number): Promise<void> {
    if (this.writing === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, waitMs));
    });
    await Promise.race([this.writing, waited]);
    clearTimeout(timer);
  }

  private async writeAll(): Promise<void> {
    const { markerOf, by = '', log } = this.options;
    for (let next = this.next(); next !== undefined; next = this.next()) {
      const marker = (markerOf as (queue: string) => PauseMarker)(next.queue);
      try {
        await marker.write(next, by);
      } catch (error) {
        log.warn('could not write the pause marker: the pause holds for this invocation only', {
          markerQueue: marker.queue,
          pausedUntil: new Date(next.untilMs).toISOString(),
          reason: (error as Error).message,
        });
      }
    }
    this.writing = undefined;
  }

  private next(): PauseStart | undefined {
    const [first] = this.pending.values();
    if (first !== undefined) this.pending.delete(first.queue);
    return first;
  }
}

/**
 * Until when (epoch ms) the queue's marker says it is paused, or undefined: no marker, or it could
 * not be read (a warning says so).
 * @example const pausedUntil = await readPause(amqp091PauseMarker(connection, config.workQueue), log);
 */
async function readPause(marker: PauseMarker, log: Logger): Promise<number | undefined> {
  try {
    return await marker.read();
  } catch (error) {
    log.warn('could not read the pause marker; taken as not paused', { markerQueue: marker.queue, reason: (error as Error).message });
    return undefined;
  }
}

export { Pause, readPause };
