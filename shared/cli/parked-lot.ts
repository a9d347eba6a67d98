import type { Config } from '../config/config.js';
import type { WalkResult } from '../parked/context.js';
import type { ParkedFilter } from '../parked/filters.js';
import { groupParked, type GroupsResult } from '../parked/groups.js';
import { listParked, type ListOptions } from '../parked/list.js';
import { purgeParked, type PurgeOptions } from '../parked/purge.js';
import { type ReplayOptions, type ReplayResult, resumableReplay } from '../parked/replay.js';
import { withParkingLot } from '../parked/session.js';
import { showParked, type ShowOptions } from '../parked/show.js';

/** Replay's options less what the lot's configuration gives (its work queue and retry header). */
type LotReplayOptions = Omit<ReplayOptions, 'workQueue' | 'retryHeader'>;

/**
 * One parking lot as `boomerang parked` acts on it: each command runs the engine, prints its rows
 * and its report as it goes, and returns its result. Direct ({@link directLot}: an AMQP connection from
 * here) or through the operator function (`--remote`: remote-lot.ts); the CLI prints the same either way.
 */
interface ParkedLot {
  /** The parking queue. */
  readonly queue: string;
  list(options: ListOptions): Promise<WalkResult & { readonly matched: number }>;
  groups(filter: ParkedFilter): Promise<GroupsResult>;
  show(options: ShowOptions): Promise<WalkResult & { readonly found: number }>;
  replay(options: LotReplayOptions): Promise<ReplayResult>;
  purge(options: PurgeOptions): Promise<WalkResult & { readonly selected: number }>;
}

/** The lot `queue` of the broker `config` names, each command on its own connection from here. */
function directLot(config: Config, queue: string): ParkedLot {
  return {
    queue,
    list: (options) => withParkingLot(config, queue, (ctx) => listParked(ctx, options)),
    groups: (filter) => withParkingLot(config, queue, (ctx) => groupParked(ctx, filter)),
    show: (options) => withParkingLot(config, queue, (ctx) => showParked(ctx, options)),
    replay: (options) =>
      withParkingLot(config, queue, resumableReplay({ ...options, workQueue: config.workQueue, retryHeader: config.retryHeader }), { resume: !options.dryRun }),
    purge: (options) => withParkingLot(config, queue, (ctx) => purgeParked(ctx, options)),
  };
}

export { directLot };
export type { ParkedLot };
