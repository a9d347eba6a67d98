import type { ParkedFilter } from './filters.js';
import { Selection, walkReported, type CommandContext, type WalkResult } from './context.js';
import { parkedViewOf } from './park-notes.js';
import { listEntry, tableHeader, tableRow } from './table.js';

/** Options of {@link listParked}. */
type ListOptions = {
  readonly filter: ParkedFilter;
  /** One JSON object per line instead of the table. */
  readonly json: boolean;
  /** Rows printed at most; the walk still reads (and so keeps in order) every message. @default no limit */
  readonly limit?: number;
};

/**
 * `list`: prints the parked messages that match, as a table or JSON lines, while it reads the
 * whole parking lot once without changing it (see `walkParkingLot`). Memory holds the message in
 * hand, whatever the queue's length.
 */
async function listParked(ctx: CommandContext, options: ListOptions): Promise<WalkResult & { readonly matched: number }> {
  const nowMs = (ctx.now ?? Date.now)();
  const matching = new Selection(options.filter, Number.POSITIVE_INFINITY, nowMs);
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const progress = ctx.progress('list', () => `${matching.selected} matched`);
  const result = await walkReported(ctx, progress, {
    readOnly: true,
    visit: async (message) => {
      const view = await parkedViewOf(ctx.parkNotes, message);
      if (!matching.take(view) || matching.selected > limit) return KEEP;
      if (options.json) progress.print(JSON.stringify(listEntry(view, nowMs)));
      else progress.print(`${matching.selected === 1 ? `${tableHeader()}\n` : ''}${tableRow(view, nowMs)}`);
      return KEEP;
    },
  });
  return { ...result, matched: matching.selected };
}

const KEEP = { kind: 'keep' } as const;

export { listParked };
export type { ListOptions };
