/**
 * Deleting parked messages: `purge`, the command, and retention, which is the same purge by age
 * (`boomerang parked purge --older-than <age> --yes`), run on a schedule.
 */
import { type CommandContext, Selection, walkReported, type WalkResult } from './context.js';
import { EVERYTHING, type ParkedFilter } from './filters.js';
import { parkedViewOf } from './park-notes.js';

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
    visit: async (message) => (selection.take(await parkedViewOf(ctx.parkNotes, message)) && !options.dryRun ? { kind: 'delete' } : { kind: 'keep' }),
  });
  return { ...result, selected: selection.selected };
}

/** What one retention run did to a parking lot. */
type RetentionResult = {
  readonly parkingQueue: string;
  readonly olderThanMs: number;
  /** Parked messages deleted: parked at least `olderThanMs` ago. */
  readonly purged: number;
  /** Parked messages left in the lot, in their order. */
  readonly kept: number;
  /** Messages in the lot when the run began. */
  readonly total: number;
  /** `done`, or why the walk ended early (`aborted`: the deadline; the next run carries on). */
  readonly ending: WalkResult['ending'];
};

/**
 * Retention: deletes the parked messages parked at least `olderThanMs` ago and keeps the others in
 * order. It is `boomerang parked purge --older-than <age> --yes`: the same filter, the same walk.
 * @example const { purged, kept } = await purgeOlderThan(ctx, 14 * 86_400_000);
 */
async function purgeOlderThan(ctx: CommandContext, olderThanMs: number): Promise<RetentionResult> {
  const result = await purgeParked(ctx, { filter: { ...EVERYTHING, olderThanMs }, dryRun: false });
  return { parkingQueue: ctx.queue, olderThanMs, purged: result.deleted, kept: result.kept, total: result.total, ending: result.ending };
}

export { purgeOlderThan, purgeParked };
export type { PurgeOptions, RetentionResult };
