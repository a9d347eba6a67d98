import type { ConfirmChannel } from 'amqplib';
import { matchesFilter, type ParkedFilter } from './filters.js';
import type { ParkNotes } from './park-notes.js';
import type { ParkedView } from './parked-view.js';
import type { Progress } from './progress.js';
import { walkParkingLot, type WalkCounts, type WalkEnding, type WalkOptions } from './walk.js';

/** What every parking-lot command runs with; tests pass a fake `progress`. */
type CommandContext = {
  readonly channel: ConfirmChannel;
  /** The parking queue. */
  readonly queue: string;
  readonly publishTimeoutMs: number;
  /** The most messages a read's consumer holds at once: the queue's BATCH_SIZE. @default 100 */
  readonly prefetch?: number;
  /** Ctrl-C: stop after the message in hand. */
  readonly signal?: AbortSignal;
  /** A report for one walk: its label and its own counts in words. */
  readonly progress: (label: string, details: (counts: Readonly<WalkCounts>) => string) => Progress;
  /** @default Date.now */
  readonly now?: () => number;
  /**
   * A walk that changes the lot stops here when this says so and it holds nothing (so the lot keeps
   * its order): the operator function ends a slice of `replay` or `purge` this way, and the next
   * slice carries on. @default never
   */
  readonly sliceOver?: () => boolean;
  /** The lot's park notes (park-notes.ts), read through `parkedViewOf`. @default none: each message is read alone */
  readonly parkNotes?: ParkNotes;
};

/** A finished walk: its counts and how it ended. */
type WalkResult = WalkCounts & { readonly ending: WalkEnding };

/** Runs a walk of the context's queue with its progress report, which is stopped whatever happens. */
async function walkReported(
  ctx: CommandContext,
  progress: Progress,
  options: Pick<WalkOptions, 'visit' | 'stopEarly' | 'onNotMoved' | 'readOnly'>,
): Promise<WalkResult> {
  let last: Readonly<WalkCounts> = { total: 0, visited: 0, kept: 0, moved: 0, deleted: 0, notMoved: 0 };
  try {
    const stopEarly = options.stopEarly;
    const sliceOver = ctx.sliceOver;
    const result = await walkParkingLot(ctx.channel, {
      ...options,
      stopEarly: sliceOver === undefined ? stopEarly : () => (stopEarly?.() ?? false) || sliceOver(),
      queue: ctx.queue,
      publishTimeoutMs: ctx.publishTimeoutMs,
      prefetch: ctx.prefetch,
      signal: ctx.signal,
      onProgress: (counts) => {
        last = counts;
        progress.update(counts);
      },
    });
    last = result;
    return result;
  } finally {
    progress.stop(last);
  }
}

/** Picks the messages a command acts on: those matching the filter, up to `limit`. */
class Selection {
  public selected = 0;

  public constructor(
    private readonly filter: ParkedFilter,
    private readonly limit: number,
    private readonly nowMs: number,
  ) {}

  public take(view: ParkedView): boolean {
    if (this.full || !matchesFilter(this.filter, view, this.nowMs)) return false;
    this.selected++;
    return true;
  }

  /** The limit is reached: the rest of the walk only keeps messages. */
  public get full(): boolean {
    return this.selected >= this.limit;
  }
}

export { Selection, walkReported };
export type { CommandContext, WalkResult };
