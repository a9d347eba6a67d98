/**
 * `tiers` delay mode: one delay queue per distinct backoff delay, owned by one work queue.
 * A copy published to `W.delay.5000ms` expires after 5 s and the broker dead-letters it back to W.
 */
import { ConfigError } from '../errors.js';
import { assertQueueName, DEFAULT_EXCHANGE, deadLetterArguments, queueTypeArguments } from './queues.js';
import type { DelayRoute, QueueSpec, TopologyOptions } from './types.js';

type TierOptions = Pick<TopologyOptions, 'workQueue' | 'queueType' | 'tierDelaysMs'>;

/**
 * The name of `workQueue`'s delay queue for one tier.
 * @example tierQueueName('orders', 5000) // 'orders.delay.5000ms'
 */
function tierQueueName(workQueue: string, delayMs: number): string {
  return `${workQueue}.delay.${delayMs}ms`;
}

/** Throws a `ConfigError` unless the tiers are non-negative integers, distinct and ascending. */
function assertTiers(tierDelaysMs: readonly number[]): void {
  tierDelaysMs.forEach((delayMs, i) => {
    const previous = tierDelaysMs[i - 1];
    if (!Number.isSafeInteger(delayMs) || delayMs < 0 || (previous !== undefined && delayMs <= previous)) {
      throw new ConfigError(`Expected \`tierDelaysMs\` to be distinct non-negative integers in ascending order, got [${tierDelaysMs.join(', ')}]`);
    }
  });
}

/** The delay queues of `tiers` mode, shortest first. */
function tierDelayQueues(options: TierOptions): QueueSpec[] {
  assertTiers(options.tierDelaysMs);
  return options.tierDelaysMs.map((delayMs) => {
    const name = tierQueueName(options.workQueue, delayMs);
    assertQueueName(name, `the delay queue of '${options.workQueue}'`);
    return {
      name,
      role: 'delay',
      onlyIfMissing: false,
      arguments: {
        ...queueTypeArguments(options.queueType),
        // One queue-level TTL (never a per-message `expiration`), so messages expire in FIFO order at the head.
        'x-message-ttl': delayMs,
        ...deadLetterArguments(options.queueType, DEFAULT_EXCHANGE, options.workQueue),
      },
    };
  });
}

/**
 * Where to publish a copy that must wait at least `requestedDelayMs`: the smallest tier that is not
 * shorter, or the largest tier when the request is above all of them (or NaN: when in doubt, wait longer).
 * @example tierDelayRoute({ workQueue: 'orders', tierDelaysMs: [1000, 5000], ... }, 1200)
 * // { exchange: '', routingKey: 'orders.delay.5000ms', delayMs: 5000 }
 */
function tierDelayRoute(options: TierOptions, requestedDelayMs: number): DelayRoute {
  return tierRouter(options)(requestedDelayMs);
}

/** Checks the tiers once and returns a router that snaps each request up to its tier. */
function tierRouter(options: TierOptions): (requestedDelayMs: number) => DelayRoute {
  assertTiers(options.tierDelaysMs);
  const tiers = options.tierDelaysMs;
  // No tiers means retries are off (MAX_RETRIES=0): the decision parks, so no route is ever asked for.
  if (tiers.length === 0) throw new ConfigError('No delay tiers: retries are disabled (MAX_RETRIES=0), so nothing can be delayed');
  const largest = tiers[tiers.length - 1] as number;
  return (requestedDelayMs) => {
    const delayMs = tiers.find((tier) => tier >= requestedDelayMs) ?? largest;
    return { exchange: DEFAULT_EXCHANGE, routingKey: tierQueueName(options.workQueue, delayMs), delayMs };
  };
}

export { tierDelayQueues, tierDelayRoute, tierQueueName, tierRouter };
