/**
 * The one source of truth for the broker-side topology: `applyTopology`, `verifyTopology` and the
 * definitions export all read the plan built here, so they can never disagree.
 */
import { brokerMajor } from './delivery-limit.js';
import { assertQueueName, DEFAULT_EXCHANGE, deadLetterArguments, type QueueArguments, queueTypeArguments } from './queues.js';
import { exactRouter, exactSharedTopology, exactWorkBinding } from './exact.js';
import { tierDelayQueues, tierRouter } from './tiers.js';
import type { DelayRoute, QueueSpec, TopologyOptions, TopologyPlan } from './types.js';

/**
 * The parking lot: messages that ran out of retries wait here for a human, without TTL or dead-lettering,
 * and so with no delivery limit, since past one a message with nowhere to be dead-lettered is dropped.
 */
function parkingQueue(options: TopologyOptions): QueueSpec {
  const major = brokerMajor(options.brokerVersion);
  const unlimited: QueueArguments =
    options.queueType === 'quorum' && major !== undefined && major >= 4
      ? {
          // 4.x quorum queues default to 20 failed deliveries; -1 means none (on 3.x, -1 drops at the first).
          'x-delivery-limit': -1,
        }
      : {};
  return {
    name: options.parkingQueue,
    role: 'parking',
    onlyIfMissing: false,
    arguments: { ...queueTypeArguments(options.queueType), ...unlimited },
  };
}

/**
 * The work queue belongs to its team: declared only when missing, never checked. When Boomerang
 * creates it, a rejected message dead-letters to the parking lot as a safety net.
 */
function workQueue(options: TopologyOptions): QueueSpec {
  return {
    name: options.workQueue,
    role: 'work',
    onlyIfMissing: true,
    arguments: {
      ...queueTypeArguments(options.queueType),
      ...deadLetterArguments(options.queueType, DEFAULT_EXCHANGE, options.parkingQueue),
    },
  };
}

/**
 * Everything one work queue needs, in declaration order: exchanges (exact mode only), queues
 * (parking lot, work queue, delay queues), then bindings. Throws a `ConfigError` on unusable names.
 * @example
 * const plan = buildTopologyPlan({ workQueue: 'orders', parkingQueue: 'orders.parking', delayMode: 'tiers',
 *   queueType: 'quorum', tierDelaysMs: [1000, 5000], delayResolutionMs: 1000, maxDelayMs: 5000 });
 * plan.queues.map((q) => q.name); // ['orders.parking', 'orders', 'orders.delay.1000ms', 'orders.delay.5000ms']
 */
function buildTopologyPlan(options: TopologyOptions): TopologyPlan {
  assertQueueName(options.workQueue, '`workQueue`');
  assertQueueName(options.parkingQueue, '`parkingQueue`');
  const own = [parkingQueue(options), workQueue(options)];
  if (options.delayMode === 'tiers') {
    return { exchanges: [], queues: [...own, ...tierDelayQueues(options)], bindings: [] };
  }
  const shared = exactSharedTopology(options);
  return {
    exchanges: shared.exchanges,
    queues: [...own, ...shared.queues],
    bindings: [...shared.bindings, exactWorkBinding(options, options.workQueue)],
  };
}

/** Where to publish a copy that must come back to the work queue after at least `requestedDelayMs`. */
function delayRoute(options: TopologyOptions, requestedDelayMs: number): DelayRoute {
  return createDelayRouter(options)(requestedDelayMs);
}

/**
 * `delayRoute` for many delays: the options are checked once, not on every retry of an invocation.
 * Throws a `ConfigError` at once when the options cannot route (no tiers, an unusable queue name).
 */
function createDelayRouter(options: TopologyOptions): (requestedDelayMs: number) => DelayRoute {
  return options.delayMode === 'exact' ? exactRouter(options) : tierRouter(options);
}

export { buildTopologyPlan, createDelayRouter, delayRoute };
