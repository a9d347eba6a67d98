import { hostname, userInfo } from 'node:os';
import { pauseMarkerQueue } from '../amqp/pause-marker.js';
import { asUsage, intFlag } from './args.js';
import { UsageError } from '../errors.js';
import { loadConfig, topologyOptionsFromConfig, type Config } from '../config/config.js';
import type { Handler } from '../message/message.js';
import { type DeclaredQueue, pickQueue } from '../queues/declared-queues.js';
import { demoQueue, unfedQueue } from './demo-queue.js';
import { buildTopologyPlan } from '../topology/plan.js';
import type { TopologyPlan } from '../topology/types.js';

/** The demo's work queue, and the prefix every queue it resets must start with. */
const DEMO_QUEUE = 'boomerang.demo';

/** Fraction of provider answers that are 400 (no retry can fix them): a few parked messages to look at. */
const PERMANENT_FAILURE_RATE = 0.02;

/**
 * The flaky partner's rate limit, requests a second: over it, 429 with `Retry-After`, which pauses the
 * webhooks queue (its handler's `pauseQueue`) for the rest of the second, as a real partner's limit would.
 */
const PARTNER_RATE_LIMIT = 100;

/** The declared queue the demo runs when `--function` is not given. */
const DEFAULT_DEMO_FUNCTION = 'webhooks';

/** What the demo publishes for one queue, and the environment its handler needs to reach the flaky provider. */
type DemoFeed = {
  /** The body of message `i`, sent to the provider at `providerUrl`. */
  readonly message: (i: number, providerUrl: string) => unknown;
  readonly env: (providerUrl: string) => Readonly<Record<string, string>>;
};

/** The example queues the demo knows how to feed, by name. */
const DEMO_FEEDS: Readonly<Record<string, DemoFeed>> = {
  webhooks: {
    message: (i, url) => ({ url: `${url}/hooks/order-${i}`, method: 'POST', headers: { 'x-demo-id': `order-${i}` }, body: { order: i } }),
    env: () => ({}),
  },
  'partner-sync': {
    message: (i) => ({ id: `record-${i}`, record: { name: `Record ${i}`, updatedAt: new Date(0).toISOString() } }),
    env: (url) => ({ PARTNER_API_URL: url }),
  },
};

/** The flags of `boomerang local`, as node:util parseArgs gives them. */
type DemoFlags = {
  readonly function?: string;
  readonly messages?: string;
  readonly 'failure-rate'?: string;
  readonly 'interval-ms'?: string;
  readonly queue?: string;
};

/** What the demo runs with, every value checked. */
type DemoOptions = {
  /** @default 300 */
  readonly messages: number;
  /** Transient failures, a fraction of the provider's answers. @default 0.4 */
  readonly failureRate: number;
  /** @default 2000 */
  readonly intervalMs: number;
  /** The declared queue the demo runs: its handler and options (`--function`). */
  readonly name: string;
  /** A line for stderr when the demo runs the package's own example instead of the team's folder. */
  readonly notice: string | undefined;
  readonly handler: Handler;
  readonly feed: DemoFeed;
  /** The queue's config on the demo's own queues, with demo-sized retries unless the environment says otherwise. */
  readonly config: Config;
  readonly plan: TopologyPlan;
  /** The queues the demo deletes and recreates at start: its own, never the vhost's shared ones. */
  readonly ownQueues: readonly string[];
  /**
   * The exchanges it deletes with them: its delay-path marker (`<queue>.delay-path.<digest>`), which
   * vouches for the queues just deleted; exact mode's level exchanges are shared, so kept.
   */
  readonly ownExchanges: readonly string[];
  /** The work queue is one of the demo's own names (`boomerang.demo.…`): reset without asking. */
  readonly demoOwned: boolean;
};

/**
 * Reads and checks every flag and the environment before anything connects: a bad value is a
 * `UsageError` that names its flag or variable. `queues` are the declared queues; when not given, the
 * team's functions folder, or the package's own example when that folder lacks it (`demoQueue`).
 */
async function demoOptions(flags: DemoFlags, env: NodeJS.ProcessEnv, queues?: readonly DeclaredQueue[]): Promise<DemoOptions> {
  const messages = intFlag('messages', flags.messages, 1, 100_000) ?? 300;
  const intervalMs = intFlag('interval-ms', flags['interval-ms'], 100, 60_000) ?? 2000;
  const failureRate = fractionFlag('failure-rate', flags['failure-rate'], 1 - PERMANENT_FAILURE_RATE) ?? 0.4;
  const queue = flags.queue ?? defaultDemoQueue(env);
  const asked = flags.function ?? DEFAULT_DEMO_FUNCTION;
  const { queue: chosen, notice } =
    queues === undefined
      ? await asUsage(() => demoQueue(asked, Object.keys(DEMO_FEEDS), env))
      : { queue: await asUsage(() => pickQueue(queues, asked)), notice: undefined };
  const feed = DEMO_FEEDS[chosen.name];
  if (feed === undefined) throw new UsageError(unfedQueue(chosen.name, Object.keys(DEMO_FEEDS)));
  // The queue's handler and options, except: the queues are the demo's own (a PARKING_QUEUE from the
  // environment could be a real one), and the retry timing is demo-sized (4 retries of 1, 2, 4, 8 s)
  // unless the environment says otherwise, so that a run settles in a minute. Rules keep what they
  // match, whether they retry and whether they pause the queue, not their timing: partner-sync's
  // "retry for a day" would keep the demo waiting for a day.
  const config = await asUsage(() =>
    loadConfig(
      {
        MAX_RETRIES: '4',
        BACKOFF_INITIAL_MS: '1000',
        IDLE_TIMEOUT_MS: '300',
        SAFETY_MARGIN_MS: '2000',
        ...env,
        WORK_QUEUE: queue,
        PARKING_QUEUE: `${queue}.parked`,
      },
      `boomerang-${chosen.name}-demo`,
      {
        ...chosen.code,
        workQueue: undefined,
        parkingQueue: undefined,
        retry: undefined,
        rules: chosen.code.rules?.map(({ match, retry, pauseQueue }) => ({
          match,
          ...(retry === false ? { retry } : {}),
          ...(pauseQueue === undefined ? {} : { pauseQueue }),
        })),
      },
    ),
  );
  const plan = buildTopologyPlan(topologyOptionsFromConfig(config));
  // Exact mode's level and unroutable queues are shared by every work queue of the vhost: kept.
  // Its pause marker too: a pause an earlier run left would hold this one back.
  const ownQueues = [
    ...plan.queues
      .filter((q) => q.role === 'work' || q.role === 'parking' || q.role === 'notes' || (q.role === 'delay' && config.delayMode === 'tiers'))
      .map((q) => q.name),
    pauseMarkerQueue(queue),
  ];
  const ownExchanges = plan.marker === undefined ? [] : [plan.marker];
  return {
    messages,
    failureRate,
    intervalMs,
    name: chosen.name,
    notice,
    handler: chosen.handler,
    feed,
    config,
    plan,
    ownQueues,
    ownExchanges,
    demoOwned: queue === DEMO_QUEUE || queue.startsWith(`${DEMO_QUEUE}.`),
  };
}

/**
 * The demo's work queue when `--work-queue` is not given: `boomerang.demo.<user>-<host>`, a name of
 * this user on this machine, so that two people's demos on one broker never reset each other's queues,
 * and the same on every run, so that each run resets the last one's. Lower-case letters, digits and
 * hyphens; at most 40 characters after the prefix.
 * @example demoQueueName('Alice', 'laptop-7.corp.example') // 'boomerang.demo.alice-laptop-7'
 */
function demoQueueName(user: string, host: string): string {
  const clean = (text: string) =>
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '');
  const owner =
    [clean(user), clean(host.split('.')[0] ?? '')]
      .filter((part) => part !== '')
      .join('-')
      .slice(0, 40) || 'me';
  return `${DEMO_QUEUE}.${owner}`;
}

/** `demoQueueName` of whoever runs the demo, where. */
function defaultDemoQueue(env: NodeJS.ProcessEnv): string {
  let user = env.USER ?? env.USERNAME ?? '';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (a container with an arbitrary uid): the variables, else just the host.
  }
  return demoQueueName(user, hostname());
}

/** A number flag within [0, max], such as `0.4`. */
function fractionFlag(name: string, value: string | undefined, max: number): number | undefined {
  if (value === undefined) return undefined;
  const parsed = /^(\d+(\.\d*)?|\.\d+)$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!(parsed >= 0 && parsed <= max)) throw new UsageError(`--${name} must be a number from 0 to ${max}; got ${JSON.stringify(value)}`);
  return parsed;
}

export { DEFAULT_DEMO_FUNCTION, DEMO_QUEUE, demoOptions, demoQueueName, PARTNER_RATE_LIMIT, PERMANENT_FAILURE_RATE };
export type { DemoFlags };
