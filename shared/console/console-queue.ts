import { topologyOptionsFromConfig, type Config } from '../config/config.js';
import type { Env } from '../config/env.js';
import { ConfigError } from '../errors.js';
import type { QueueDefinition } from '../queues/define-queue.js';
import { pullScheduleMs } from '../queues/deploy-options.js';
import { buildTopologyPlan } from '../topology/plan.js';
import { formatDuration, type RetryTimeline, retryTimeline } from '../topology/retry-timeline.js';

/** One queue as the console shows it: its work queue, parking lot and delay path. */
type ConsoleQueue = {
  /** How the console names it: the declared queue's name, or the work queue's for `--queue`. */
  readonly name: string;
  readonly workQueue: string;
  readonly parkingQueue: string;
  /** The delay tiers (tiers mode) or levels (exact mode) its retries wait in. */
  readonly delayQueues: readonly string[];
  /** `delayMode: 'native'`: its retries wait in the work queue itself, which the console then counts apart. */
  readonly native: boolean;
  /** The command that declares its topology, for the console to show when a queue of it is missing. */
  readonly applyCommand: string;
  /** Its retry policy in time (`boomerang policy`), with its pull schedule when it deploys the pull function. */
  readonly timeline: RetryTimeline;
  /** That schedule, in ms; undefined when not known (a queue from the environment) or not deployed. */
  readonly pullEveryMs: number | undefined;
};

/** The console's view of one work queue, from its config through the topology plan (the one source of truth for the names). */
function consoleQueueOf(name: string, config: Config, applyCommand: string, pullEveryMs?: number): ConsoleQueue {
  const topology = topologyOptionsFromConfig(config);
  const plan = buildTopologyPlan(topology);
  return {
    name,
    workQueue: config.workQueue,
    parkingQueue: config.parkingQueue,
    delayQueues: plan.queues.filter((q) => q.role === 'delay').map((q) => q.name),
    native: config.delayMode === 'native',
    applyCommand,
    timeline: retryTimeline(config.policy, topology, pullEveryMs),
    pullEveryMs,
  };
}

/** A word for a POSIX shell: as it is when it holds nothing the shell reads, else single-quoted. */
function shellWord(word: string): string {
  return /^[\w.:@%+=,/-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The declared queues as the console shows them: each under its declared name, with the work queue,
 * parking lot and delay queues of its resolved config (the options in its file, then `env`), as its
 * pull function sees them. A value the config refuses is a `ConfigError` naming it.
 * @example consoleQueuesFromDeclared(await loadDeclaredQueues(), process.env).map((q) => q.name) // ['partner-sync', 'webhooks']
 */
function consoleQueuesFromDeclared(
  queues: readonly (Pick<QueueDefinition, 'name' | 'loadConfig'> & Partial<Pick<QueueDefinition, 'deploy'>>)[],
  env: Env,
): ConsoleQueue[] {
  return queues.map((queue) =>
    consoleQueueOf(
      queue.name,
      queue.loadConfig(env, 'pull'),
      `boomerang topology apply --function ${shellWord(queue.name)}`,
      queue.deploy === undefined ? undefined : pullScheduleMs(queue.deploy),
    ),
  );
}

/**
 * The console's queues from the environment alone and `--queue` flags (queues that no file in
 * functions/ declares). No flag: the config's WORK_QUEUE and PARKING_QUEUE. With flags, each work
 * queue gets the default parking lot `<queue>.parked`, unless it is WORK_QUEUE itself. An unusable
 * name is a `ConfigError`.
 * @example consoleQueuesFromConfig(loadConfig(), ['orders', 'invoices']).map((q) => q.parkingQueue) // ['orders.parked', 'invoices.parked']
 */
function consoleQueuesFromConfig(config: Config, workQueues: readonly string[] = []): ConsoleQueue[] {
  const names = workQueues.length === 0 ? [config.workQueue] : [...new Set(workQueues)];
  return names.map((workQueue) => {
    if (workQueue.startsWith('amq.'))
      throw new ConfigError(`--queue ${JSON.stringify(workQueue)}: names starting with "amq." belong to the broker; name a work queue`);
    const parkingQueue = workQueue === config.workQueue ? config.parkingQueue : `${workQueue}.parked`;
    // The parking lot goes in the environment: topology's --queue would otherwise take PARKING_QUEUE,
    // which names WORK_QUEUE's lot, not this queue's. The rest (AMQP_URL, MAX_RETRIES...) is the console's.
    const apply = `PARKING_QUEUE=${shellWord(parkingQueue)} boomerang topology apply --work-queue ${shellWord(workQueue)}`;
    return consoleQueueOf(workQueue, { ...config, workQueue, parkingQueue }, apply);
  });
}

/**
 * A queue's retry policy as the overview draws it (`boomerang policy` prints the same): each attempt
 * after the first, when it comes due and, with a pull schedule, when a run takes it, in ms and in words.
 */
function policyView(q: ConsoleQueue): Record<string, unknown> {
  const { timeline, pullEveryMs } = q;
  return {
    pullEvery: pullEveryMs === undefined ? null : formatDuration(pullEveryMs),
    attempts: timeline.attempts.map((a) => ({
      attempt: a.attempt,
      atMs: a.atMs,
      pullAtMs: a.pullAtMs ?? null,
      due: formatDuration(a.atMs),
      pull: a.pullAtMs === undefined ? null : formatDuration(a.pullAtMs),
      via: a.via,
    })),
    parkedAfter: formatDuration(timeline.parkedAtMs),
    parkedAfterPull: timeline.parkedPullAtMs === undefined ? null : formatDuration(timeline.parkedPullAtMs),
  };
}

export { consoleQueuesFromConfig, consoleQueuesFromDeclared, policyView, shellWord };
export type { ConsoleQueue };
