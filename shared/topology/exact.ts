/**
 * `exact` delay mode: arbitrary delays through a fixed set of queues shared by every work queue of a
 * vhost, by binary decomposition (NServiceBus "v2 delay infrastructure"). Level k holds a message for
 * 2^k resolution units R and only when bit k of the delay is 1; otherwise its exchange forwards the
 * message down to level k-1. Level 0 ends in the delivery exchange, where each work queue W is bound.
 *
 * Routing key of a delay of 10 units with L = 4 levels, for W = 'orders': `1.0.1.0.orders`
 * (L bit words, most significant first, then W's words). It is published straight to level 3's exchange,
 * waits 8 units in level 3, is forwarded by level 2's exchange, waits 2 units in level 1, and is
 * forwarded by level 0's exchange to the delivery exchange, which routes it to `orders`.
 *
 * Better than NServiceBus: W binds with exactly L `*` words then its own words (not `#.W`, which also
 * matches `x.W`), names carry R and L (two configurations never share queues with other patterns), and
 * the delivery exchange has an alternate exchange, so a message whose queue is gone is kept, not stuck.
 */
import { ConfigError } from '../errors.js';
import { type ExactOptions, exactDeliveryExchangeName, exactLevelCount, exactLevelName, exactUnroutableName } from './exact-names.js';
import { assertQueueName, deadLetterArguments, MAX_NAME_BYTES, queueTypeArguments } from './queues.js';
import type { BindingSpec, DelayRoute, ExchangeSpec, QueueSpec, TopologyOptions, TopologyPlan } from './types.js';

/** A binding pattern over the L bit words: `bit` at `level`'s position, `*` elsewhere, then `tail`. */
function bitPattern(levels: number, level: number, bit: '0' | '1', tail: string): string {
  const words = Array.from({ length: levels }, (_, i) => (levels - 1 - i === level ? bit : '*'));
  return [...words, tail].join('.');
}

/** Throws a `ConfigError` unless `workQueue` can be routed by the delivery exchange without ambiguity. */
function assertExactQueueName(options: ExactOptions, workQueue: string): void {
  assertQueueName(workQueue, 'the work queue');
  if (workQueue.split('.').some((word) => word === '*' || word === '#')) {
    throw new ConfigError(
      `Queue '${workQueue}' cannot use exact delays: a dot-separated word '*' or '#' is a topic wildcard, ` +
        "so its binding on the delivery exchange would match other queues' messages. " +
        "Rename the queue or use delayMode 'tiers'.",
    );
  }
  const prefixBytes = 2 * exactLevelCount(options);
  const queueBytes = Buffer.byteLength(workQueue, 'utf8');
  if (prefixBytes + queueBytes > MAX_NAME_BYTES) {
    throw new ConfigError(
      `Queue '${workQueue}' is too long for exact delays: its routing key would be ${prefixBytes} bytes of delay ` +
        `bits + ${queueBytes} bytes of name, over the AMQP limit of ${MAX_NAME_BYTES} bytes; with these levels a ` +
        `queue name may have at most ${MAX_NAME_BYTES - prefixBytes} bytes. Rename the queue or use delayMode 'tiers'.`,
    );
  }
}

/** The shared part: level exchanges and queues, the delivery exchange and the unroutable keeper. */
function exactSharedTopology(options: ExactOptions & Pick<TopologyOptions, 'queueType'>): TopologyPlan {
  const levels = exactLevelCount(options);
  const delivery = exactDeliveryExchangeName(options);
  const unroutable = exactUnroutableName(options);
  const exchanges: ExchangeSpec[] = [
    { name: unroutable, type: 'fanout', arguments: {} },
    // A message whose work queue (or its binding) is gone is kept in the unroutable queue, never stuck.
    { name: delivery, type: 'topic', arguments: { 'alternate-exchange': unroutable } },
  ];
  const queues: QueueSpec[] = [];
  const bindings: BindingSpec[] = [];
  for (let level = levels - 1; level >= 0; level -= 1) {
    const name = exactLevelName(options, level);
    const below = level === 0 ? delivery : exactLevelName(options, level - 1);
    exchanges.push({ name, type: 'topic', arguments: {} });
    queues.push({
      name,
      role: 'delay',
      onlyIfMissing: false,
      arguments: {
        ...queueTypeArguments(options.queueType),
        // Level k holds every message for the same 2^k units, so they expire in FIFO order at the head.
        'x-message-ttl': 2 ** level * options.delayResolutionMs,
        // No fixed routing key: the message keeps its bits and destination on the way down.
        ...deadLetterArguments(options.queueType, below),
      },
    });
    bindings.push(
      { destinationKind: 'queue', destination: name, source: name, pattern: bitPattern(levels, level, '1', '#') },
      { destinationKind: 'exchange', destination: below, source: name, pattern: bitPattern(levels, level, '0', '#') },
    );
  }
  const keeper = queueTypeArguments(options.queueType);
  queues.push({ name: unroutable, role: 'unroutable', onlyIfMissing: false, arguments: keeper });
  bindings.push({ destinationKind: 'queue', destination: unroutable, source: unroutable, pattern: '' });
  return { exchanges, queues, bindings };
}

/** Binds `workQueue` on the delivery exchange: exactly L `*` words, then its own words. */
function exactWorkBinding(options: ExactOptions, workQueue: string): BindingSpec {
  assertExactQueueName(options, workQueue);
  const stars = Array.from({ length: exactLevelCount(options) }, () => '*');
  return {
    destinationKind: 'queue',
    destination: workQueue,
    source: exactDeliveryExchangeName(options),
    pattern: [...stars, workQueue].join('.'),
  };
}

/**
 * Where to publish a copy for `workQueue` that must wait at least `requestedDelayMs`: ceil(d / R) units
 * (never early), at least 1 and at most 2^L - 1 (also for NaN: when in doubt, wait longer), sent
 * straight to the level of the highest set bit.
 * @example exactDelayRoute({ workQueue: 'W', delayResolutionMs: 1000, maxDelayMs: 15_000, ... }, 10_000)
 * // { exchange: 'boomerang.delay.1000ms.L4.level-03', routingKey: '1.0.1.0.W', delayMs: 10_000 }
 */
function exactDelayRoute(options: ExactOptions & Pick<TopologyOptions, 'workQueue'>, requestedDelayMs: number): DelayRoute {
  return exactRouter(options)(requestedDelayMs);
}

/** Checks the queue name and level count once and returns a router for arbitrary delays. */
function exactRouter(options: ExactOptions & Pick<TopologyOptions, 'workQueue'>): (requestedDelayMs: number) => DelayRoute {
  assertExactQueueName(options, options.workQueue);
  const levels = exactLevelCount(options);
  const maxUnits = 2 ** levels - 1;
  return (requestedDelayMs) => {
    const wanted = Math.ceil(requestedDelayMs / options.delayResolutionMs);
    const units = Number.isNaN(wanted) ? maxUnits : Math.min(maxUnits, Math.max(1, wanted));
    const bits = units.toString(2).padStart(levels, '0');
    const highest = levels - 1 - bits.indexOf('1');
    return {
      exchange: exactLevelName(options, highest),
      routingKey: [...bits, options.workQueue].join('.'),
      delayMs: units * options.delayResolutionMs,
    };
  };
}

export { assertExactQueueName, exactDelayRoute, exactRouter, exactSharedTopology, exactWorkBinding };
