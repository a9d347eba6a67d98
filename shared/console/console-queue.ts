import { topologyOptionsFromConfig, type Config } from '../config/config.js';
import { ConfigError } from '../errors.js';
import { buildTopologyPlan } from '../topology/plan.js';

/** One declared queue as the console shows it: its work queue, parking lot and delay path. */
type ConsoleQueue = {
  /** How the console names it (the work queue's name). */
  readonly name: string;
  readonly workQueue: string;
  readonly parkingQueue: string;
  /** The delay tiers (tiers mode) or levels (exact mode) its retries wait in. */
  readonly delayQueues: readonly string[];
};

/**
 * The console's queues from the config and `--queue` flags, through the topology plan (the one
 * source of truth for the names). No flag: the config's WORK_QUEUE and PARKING_QUEUE. With flags,
 * each work queue gets the default parking lot `<queue>.parked`, unless it is WORK_QUEUE itself.
 * Declared-queue discovery plugs in here: it returns the same type. An unusable name is a `ConfigError`.
 * @example consoleQueuesFromConfig(loadConfig(), ['orders', 'invoices']).map((q) => q.parkingQueue) // ['orders.parked', 'invoices.parked']
 */
function consoleQueuesFromConfig(config: Config, workQueues: readonly string[] = []): ConsoleQueue[] {
  const names = workQueues.length === 0 ? [config.workQueue] : [...new Set(workQueues)];
  return names.map((workQueue) => {
    if (workQueue.startsWith('amq.')) throw new ConfigError(`--queue ${JSON.stringify(workQueue)}: names starting with "amq." belong to the broker; name a work queue`);
    const parkingQueue = workQueue === config.workQueue ? config.parkingQueue : `${workQueue}.parked`;
    const plan = buildTopologyPlan({ ...topologyOptionsFromConfig(config), workQueue, parkingQueue });
    return { name: workQueue, workQueue, parkingQueue, delayQueues: plan.queues.filter((q) => q.role === 'delay').map((q) => q.name) };
  });
}

export { consoleQueuesFromConfig };
export type { ConsoleQueue };
