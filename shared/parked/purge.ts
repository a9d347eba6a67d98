import { Selection, walkReported, type CommandContext, type WalkResult } from './context.js';
import type { ParkedFilter } from './filters.js';
import { toParkedView } from './parked-view.js';

/** Options of {@link purgeParked}. */
type PurgeOptions = {
  readonly filter: ParkedFilter;
  /** Delete at most this many. @default no limit */
  readonly limit?: number;
  /** Count what would be deleted, and delete nothing. */
  readonly dryRun: boolean;
};

/**
 * `purge`: deletes (acks) the parked messages that match, one at a time; the others stay parked, in
 * order. The caller asks for confirmation first.
 */
async function purgeParked(ctx: CommandContext, options: PurgeOptions): Promise<WalkResult & { readonly selected: number }> {
  const selection = new Selection(options.filter, options.limit ?? Number.POSITIVE_INFINITY, (ctx.now ?? Date.now)());
  const label = options.dryRun ? 'purge (dry run)' : 'purge';
  const progress = ctx.progress(label, (c) => (options.dryRun ? `${selection.selected} would be deleted` : `${c.deleted} deleted · ${c.kept} kept`));
  const result = await walkReported(ctx, progress, {
    readOnly: options.dryRun,
    stopEarly: () => selection.full,
    visit: (message) => (selection.take(toParkedView(message)) && !options.dryRun ? { kind: 'delete' } : { kind: 'keep' }),
  });
  return { ...result, selected: selection.selected };
}

export { purgeParked };
export type { PurgeOptions };
