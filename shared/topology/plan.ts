/**
 * The one source of truth for the broker-side topology: `applyTopology`, `verifyTopology` and the
 * definitions export all read the plan built here, so they can never disagree.
 */
import { brokerMajor } from './delivery-limit.js';
import { exactLevelCount } from './exact-names.js';
import { ConfigError } from '../errors.js';
import { parkNotesQueue } from '../message/park-note.js';
import { assertQueueName, DEFAULT_EXCHANGE, deadLetterArguments, type QueueArguments, queueTypeArguments } from './queues.js';
import { exactRouter, exactSharedTopology, exactWorkBinding } from './exact.js';
import { nativeWorkQueue } from './native-queue.js';
import { tierDelayQueues, tierRouter } from './tiers.js';
import type { DelayRoute, ExchangeSpec, QueueSpec, TopologyOptions, TopologyPlan } from './types.js';

/**
 * The parking lot: messages that ran out of retries wait here for a human, without TTL or dead-lettering,
 * and so with no delivery limit, since past one a message with nowhere to be dead-lettered is dropped.
 */
function parkingQueue(options: TopologyOptions): QueueSpec {
  // Native mode runs on 4.3 or later only: without a version (an export), plan for that.
  const major = brokerMajor(options.brokerVersion) ?? (options.delayMode === 'native' ? 4 : undefined);
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

/** The most park notes a lot keeps: past it the oldest is dropped (at about 2 to 8 KiB a note, 20 to 80 MB). */
const PARK_NOTES_MAX = 10_000;

/**
 * The park notes of a lot (message/park-note.ts): why the broker parked a message no copy could carry,
 * read by the parking-lot tools. Copy modes only: native mode annotates the message itself. Typed like
 * the lot (so unlimited deliveries on a 4.x quorum queue, since every read returns the notes), and
 * bounded: a note outlives its message, and the oldest goes first.
 */
function parkNotesQueueSpec(options: TopologyOptions): QueueSpec {
  return {
    name: parkNotesQueue(options.parkingQueue),
    role: 'notes',
    onlyIfMissing: false,
    // Past the length the oldest is dropped: drop-head, the default overflow of classic and quorum queues.
    arguments: { ...parkingQueue(options).arguments, 'x-max-length': PARK_NOTES_MAX },
  };
}

/**
 * The work queue belongs to its team: declared only when missing, never checked. When Boomerang
 * creates it, a rejected message dead-letters to the parking lot as a safety net. In `native` mode its
 * arguments are the delay path itself, so they are checked (native-queue.ts).
 */
function workQueueSpec(options: TopologyOptions): QueueSpec {
  if (options.delayMode === 'native') return nativeWorkQueue(options);
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

/** An entity a copy or a consumer goes to, as `queue <name>` or `exchange <name>`. */
type Destination = `${'queue' | 'exchange'} ${string}`;

/**
 * Where this config sends anything: the work queue, the parking lot and, read from the delay router
 * itself (so it cannot disagree with the copies), the queue of every tier or the exchange of every
 * exact level.
 */
function destinations(options: TopologyOptions): Destination[] {
  const out = new Set<Destination>([`queue ${options.workQueue}`, `queue ${options.parkingQueue}`]);
  // Native: nothing is published; the work queue itself delays, and dead-letters to the parking lot.
  if (options.delayMode === 'native') return [...out];
  const tiers = options.delayMode === 'tiers';
  // No tier: MAX_RETRIES=0 without retrying rules has no delay path (and the router would refuse).
  if (tiers && options.tierDelaysMs.length === 0) return [...out];
  const route = createDelayRouter(options);
  const delaysMs = tiers ? options.tierDelaysMs : levelDelaysMs(options);
  for (const delayMs of delaysMs) {
    const { exchange, routingKey } = route(delayMs);
    out.add(exchange === '' ? `queue ${routingKey}` : `exchange ${exchange}`);
  }
  return [...out];
}

/** One delay per exact level (1, 2, 4 ... units): each is routed first to its own level's exchange. */
function levelDelaysMs(options: TopologyOptions): number[] {
  return Array.from({ length: exactLevelCount(options) }, (_, level) => options.delayResolutionMs * 2 ** level);
}

/** Exchange names are at most 255 bytes: a longer marker name is not made. */
const MAX_EXCHANGE_NAME_BYTES = 255;

/**
 * The name of the delay-path marker of `options`: `<work queue>.delay-path.<digest>`, the digest
 * (16 hex digits, FNV-1a twice) of every destination of the config, so that another config (other
 * tiers, levels or parking lot) names another marker. Undefined when the name would be too long.
 * @example delayPathMarker(options); // 'orders.delay-path.5f0e2c1d9a7b3e64'
 */
function delayPathMarker(options: TopologyOptions): string | undefined {
  // Native has no delay path to vouch for: the check looks at the work queue and the parking lot.
  if (options.delayMode === 'native') return undefined;
  const text = destinations(options).join('\n');
  const name = `${options.workQueue}.delay-path.${fnv1a(text, 0x811c9dc5)}${fnv1a(text, 0x01000193)}`;
  return Buffer.byteLength(name) <= MAX_EXCHANGE_NAME_BYTES ? name : undefined;
}

/** 32-bit FNV-1a of the UTF-16 code units, as 8 hex digits: a name, not a secret. */
function fnv1a(text: string, seed: number): string {
  let hash = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/** The plan's delay-path marker as the exchange it is (fanout, nothing bound to it), if it has one. */
function markerExchanges(plan: { readonly marker?: string }): ExchangeSpec[] {
  return plan.marker === undefined ? [] : [{ name: plan.marker, type: 'fanout', arguments: {} }];
}

/** Every exchange the plan makes, the delay-path marker last: what an export writes and a clean-up deletes. */
function allExchanges(plan: Pick<TopologyPlan, 'exchanges' | 'marker'>): ExchangeSpec[] {
  return [...plan.exchanges, ...markerExchanges(plan)];
}

/**
 * Everything one work queue needs, in declaration order: exchanges (exact mode only), queues
 * (parking lot, its park notes, work queue, delay queues), then bindings, and last the delay-path
 * marker. Native mode: the parking lot and the work queue only. Throws a `ConfigError` on unusable names.
 * @example
 * const plan = buildTopologyPlan({ workQueue: 'orders', parkingQueue: 'orders.parking', delayMode: 'tiers',
 *   queueType: 'quorum', tierDelaysMs: [1000, 5000], delayResolutionMs: 1000, maxDelayMs: 5000 });
 * plan.queues.map((q) => q.name); // ['orders.parking', 'orders.parking.notes', 'orders', 'orders.delay.1000ms', 'orders.delay.5000ms']
 */
function buildTopologyPlan(options: TopologyOptions): TopologyPlan {
  assertQueueName(options.workQueue, '`workQueue`');
  assertQueueName(options.parkingQueue, '`parkingQueue`');
  if (options.delayMode === 'native') return { exchanges: [], queues: [parkingQueue(options), workQueueSpec(options)], bindings: [] };
  const notes = parkNotesQueueSpec(options);
  assertQueueName(notes.name, 'the park notes queue (`parkingQueue` + ".notes")');
  const own = [parkingQueue(options), notes, workQueueSpec(options)];
  const marker = delayPathMarker(options);
  if (options.delayMode === 'tiers') {
    return { exchanges: [], queues: [...own, ...tierDelayQueues(options)], bindings: [], marker };
  }
  const shared = exactSharedTopology(options);
  return {
    exchanges: shared.exchanges,
    queues: [...own, ...shared.queues],
    bindings: [...shared.bindings, exactWorkBinding(options, options.workQueue)],
    marker,
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
  if (options.delayMode === 'native') {
    throw new ConfigError(
      "delayMode 'native' has no delay path: the work queue holds a failed message itself until its settlement's delivery time, so nothing is published",
    );
  }
  return options.delayMode === 'exact' ? exactRouter(options) : tierRouter(options);
}

export { allExchanges, buildTopologyPlan, createDelayRouter, delayPathMarker, delayRoute, destinations, markerExchanges, workQueueSpec };
export type { Destination };
