import { setTimeout as sleep } from 'node:timers/promises';
import { READ_WINDOW, Selection, walkReported, type CommandContext, type WalkResult } from './context.js';
import { replayCopy } from './copies.js';
import type { ParkedFilter } from './filters.js';
import { toParkedView } from './parked-view.js';
import { TokenBucket } from './token-bucket.js';
import type { Verdict } from './walk.js';

/** Options of {@link replayParked}. */
type ReplayOptions = {
  readonly filter: ParkedFilter;
  /** Send every selected message here instead of its source queue (`--to`). */
  readonly to?: string;
  /** Keep the retry count (and failure times) instead of starting over (`--keep-count`). */
  readonly keepCount: boolean;
  /** Replay at most this many. @default no limit */
  readonly limit?: number;
  /** Count what would be replayed, and replay nothing. */
  readonly dryRun: boolean;
  /** Messages per second at most (`--rate`). @default no limit (about 1 000/s: one confirm at a time) */
  readonly ratePerSecond?: number;
  /** `RETRY_HEADER`: removed from replayed messages unless `keepCount`. */
  readonly retryHeader: string;
};

/** What `replay` did, per target queue. */
type ReplayResult = WalkResult & {
  /** Matched the filter (within the limit). */
  readonly selected: number;
  /** Selected but with no source queue header, and no `--to`: left parked. */
  readonly noSource: number;
  /** Per target queue: replayed (or, in a dry run, would be). */
  readonly byQueue: ReadonlyMap<string, number>;
  /** Per target queue that does not exist: left parked. */
  readonly unroutable: ReadonlyMap<string, number>;
};

const KEEP: Verdict = { kind: 'keep' };

/**
 * `replay`: puts the selected parked messages back on their source queue (or `to`), one at a time:
 * each is published (mandatory, confirmed) before its parked copy is acked, so a crash duplicates at
 * most one message and loses none. Messages not selected stay parked, in order. A message whose queue
 * does not exist stays parked. With `ratePerSecond`, a token bucket spaces the publishes.
 */
async function replayParked(ctx: CommandContext, options: ReplayOptions): Promise<ReplayResult> {
  const now = ctx.now ?? Date.now;
  const selection = new Selection(options.filter, options.limit ?? Number.POSITIVE_INFINITY, now());
  const bucket = options.ratePerSecond === undefined ? undefined : new TokenBucket(options.ratePerSecond, 1, now());
  const sent = new Map<string, number>();
  const unroutable = new Map<string, number>();
  let noSource = 0;
  const label = options.dryRun ? 'replay (dry run)' : 'replay';
  const progress = ctx.progress(label, (c) => (options.dryRun ? `${total(sent)} would be replayed` : `${c.moved} replayed · ${c.notMoved} unroutable`));
  const result = await walkReported(ctx, progress, {
    window: options.dryRun ? READ_WINDOW : 1,
    stopEarly: () => selection.full,
    onNotMoved: (_message, queue) => add(unroutable, queue, 1),
    visit: async (message) => {
      const view = toParkedView(message);
      if (!selection.take(view)) return KEEP;
      const queue = options.to ?? view.sourceQueue;
      if (queue === undefined) {
        noSource++;
        return KEEP;
      }
      if (!options.dryRun) {
        const waitMs = bucket?.take(now()) ?? 0;
        // Ctrl-C during a long wait: this one stays parked and the walk stops after it.
        if (waitMs > 0 && !(await sleep(waitMs, true, { signal: ctx.signal }).catch(() => false))) return KEEP;
      }
      add(sent, queue, 1);
      return options.dryRun ? KEEP : { kind: 'move', queue, copy: replayCopy(message, { retryHeader: options.retryHeader, keepCount: options.keepCount }) };
    },
  });
  for (const [queue, count] of unroutable) add(sent, queue, -count);
  return { ...result, selected: selection.selected, noSource, byQueue: sent, unroutable };
}

function add(counts: Map<string, number>, key: string, n: number): void {
  const next = (counts.get(key) ?? 0) + n;
  if (next === 0) counts.delete(key);
  else counts.set(key, next);
}

function total(counts: ReadonlyMap<string, number>): number {
  return [...counts.values()].reduce((sum, n) => sum + n, 0);
}

export { replayParked };
export type { ReplayOptions, ReplayResult };
