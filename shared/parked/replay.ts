import { setTimeout as sleep } from 'node:timers/promises';
import { Selection, walkReported, type CommandContext, type WalkResult } from './context.js';
import { replayCopy } from './copies.js';
import type { ParkedFilter } from './filters.js';
import { BoomerangHeader } from '../message/headers.js';
import { parkedViewOf } from './park-notes.js';
import type { ParkedView } from './parked-view.js';
import { TokenBucket } from './token-bucket.js';
import type { Verdict } from './walk.js';

/** Options of {@link replayParked}. */
type ReplayOptions = {
  readonly filter: ParkedFilter;
  /** Send every selected message here instead of its source queue (`--to`). */
  readonly to?: string;
  /**
   * The work queue the parking lot belongs to (the declared configuration). A boomerang-source-queue
   * header is followed only when it names this queue or the queue the broker dead-lettered the
   * message from: anyone who can publish to the work queue can set the header. @default none
   */
  readonly workQueue?: string;
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
  /** Selected but left parked: their header names a queue neither the configuration nor the broker does (no `--to`). */
  readonly refused: readonly Refusal[];
  /** Selected but left parked: amqplib cannot send them (headers over its 64 KiB encoding buffer), by id, with why. */
  readonly unsendable: readonly Unsendable[];
};

/** A message replay could not send at all, and why. */
type Unsendable = { readonly messageId: string | undefined; readonly reason: string };

/** A message replay would not send where its header says, and why. */
type Refusal = { readonly messageId: string | undefined; readonly claimed: string; readonly reason: string };

const KEEP: Verdict = { kind: 'keep' };

/** What replays of one command counted so far: a replay resumed after a lost connection carries on from it. */
type ReplayTally = {
  selected: number;
  noSource: number;
  readonly sent: Map<string, number>;
  readonly unroutable: Map<string, number>;
  readonly refused: Refusal[];
  readonly unsendable: Unsendable[];
};

/** A tally of nothing yet: where a replay starts. */
function newTally(): ReplayTally {
  return { selected: 0, noSource: 0, sent: new Map(), unroutable: new Map(), refused: [], unsendable: [] };
}

/**
 * A replay command that can run again after a lost connection (see `withParkingLot`'s `resume`):
 * each run walks the parking lot anew, with what is left of the limit, and its result counts every
 * run so far. A message in hand when the connection dropped may be replayed twice, and is counted twice.
 */
function resumableReplay(options: ReplayOptions): (ctx: CommandContext) => Promise<ReplayResult> {
  const tally = newTally();
  return (ctx) => replayParked(ctx, options, tally);
}

/**
 * `replay`: puts the selected parked messages back on their source queue (or `to`), one at a time:
 * each is published (mandatory, confirmed) before its parked copy is acked, so a crash duplicates at
 * most one message and loses none. Messages not selected stay parked, in order. A message whose queue
 * does not exist stays parked. With `ratePerSecond`, a token bucket spaces the publishes.
 */
async function replayParked(ctx: CommandContext, options: ReplayOptions, tally: ReplayTally = newTally()): Promise<ReplayResult> {
  const now = ctx.now ?? Date.now;
  const selection = new Selection(options.filter, (options.limit ?? Number.POSITIVE_INFINITY) - tally.selected, now());
  const bucket = options.ratePerSecond === undefined ? undefined : new TokenBucket(options.ratePerSecond, 1, now());
  const { sent, unroutable } = tally;
  const label = options.dryRun ? 'replay (dry run)' : 'replay';
  const progress = ctx.progress(label, (c) => (options.dryRun ? `${total(sent)} would be replayed` : `${c.moved} replayed · ${c.notMoved} unroutable`));
  const result = await walkReported(ctx, progress, {
    readOnly: options.dryRun,
    stopEarly: () => selection.full,
    onNotMoved: (message, queue, error) => {
      if (error.reason === 'returned') add(unroutable, queue, 1);
      else {
        add(sent, queue, -1);
        tally.unsendable.push({ messageId: message.properties.messageId as string | undefined, reason: error.message });
      }
    },
    visit: async (message) => {
      const view = await parkedViewOf(ctx.parkNotes, message);
      if (!selection.take(view)) return KEEP;
      tally.selected++;
      const target = replayDestination(view, options);
      if (target.kind === 'none') {
        tally.noSource++;
        return KEEP;
      }
      if (target.kind === 'refused') {
        tally.refused.push(target.refusal);
        return KEEP;
      }
      const { queue } = target;
      if (!options.dryRun) {
        const waitMs = bucket?.take(now()) ?? 0;
        // Ctrl-C during a long wait: this one stays parked and the walk stops after it.
        if (waitMs > 0 && !(await sleep(waitMs, true, { signal: ctx.signal }).catch(() => false))) return KEEP;
      }
      add(sent, queue, 1);
      return options.dryRun ? KEEP : { kind: 'move', queue, copy: replayCopy(message, { retryHeader: options.retryHeader, keepCount: options.keepCount }) };
    },
  });
  const byQueue = new Map(sent);
  for (const [queue, count] of unroutable) add(byQueue, queue, -count);
  return {
    ...result,
    selected: tally.selected,
    noSource: tally.noSource,
    byQueue,
    unroutable: new Map(unroutable),
    refused: [...tally.refused],
    unsendable: [...tally.unsendable],
  };
}

/**
 * Where a selected message goes: `--to`; else its boomerang-source-queue header when the lot's
 * work queue or the broker's own record names that queue (a copy the function parked, or a message
 * the broker dead-lettered from there); else, without a header, the broker's record. A header naming
 * any other queue is refused: a producer may have set it to reach a queue with the operator's rights.
 */
function replayDestination(
  view: ParkedView,
  options: Pick<ReplayOptions, 'to' | 'workQueue'>,
): { kind: 'queue'; queue: string } | { kind: 'refused'; refusal: Refusal } | { kind: 'none' } {
  if (options.to !== undefined) return { kind: 'queue', queue: options.to };
  const claimed = view.headers[BoomerangHeader.sourceQueue] === undefined ? undefined : view.sourceQueue;
  const known = claimed ?? view.brokerSourceQueue;
  if (known === undefined) return { kind: 'none' };
  if (claimed === undefined || claimed === options.workQueue || claimed === view.brokerSourceQueue) return { kind: 'queue', queue: known };
  const broker = view.brokerSourceQueue === undefined ? 'the broker never dead-lettered it' : `the broker dead-lettered it from ${view.brokerSourceQueue}`;
  const reason = `its boomerang-source-queue header names ${claimed}, which is not the parking lot's work queue (${options.workQueue ?? 'none given'}), and ${broker}`;
  return { kind: 'refused', refusal: { messageId: view.messageId, claimed, reason } };
}

function add(counts: Map<string, number>, key: string, n: number): void {
  const next = (counts.get(key) ?? 0) + n;
  if (next === 0) counts.delete(key);
  else counts.set(key, next);
}

function total(counts: ReadonlyMap<string, number>): number {
  return [...counts.values()].reduce((sum, n) => sum + n, 0);
}

export { newTally, replayDestination, replayParked, resumableReplay };
export type { Refusal, ReplayOptions, ReplayResult, ReplayTally, Unsendable };
