import type { CommandContext, WalkResult } from './context.js';
import { EVERYTHING } from './filters.js';
import { purgeParked } from './purge.js';

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

export { purgeOlderThan };
export type { RetentionResult };
