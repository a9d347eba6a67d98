import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/errors.js';
import { assertExactQueueName, exactDelayRoute, exactSharedTopology, exactWorkBinding } from '../../shared/topology/exact.js';
import { exactDeliveryExchangeName, exactLevelCount, exactLevelName, exactUnroutableName } from '../../shared/topology/exact-names.js';
import { topologyOptions } from '../helpers/topology.js';

/** R = 1000 ms, maxDelayMs = 15 s: L = 4 levels (up to 15 units). */
const options = topologyOptions({ delayMode: 'exact', workQueue: 'W', delayResolutionMs: 1000, maxDelayMs: 15_000 });

describe('exactLevelCount', () => {
  it.each([
    // resolution, max, levels
    [1000, 3_600_000, 12], // 2^11 - 1 = 2047 s < 1 h <= 4095 s
    [1000, 1, 1], // at least one level
    [1000, 1000, 1],
    [1000, 3000, 2],
    [1000, 3001, 3],
    [1000, 15_000, 4],
    [1000, 15_001, 5],
    [250, 750, 2],
  ])('R = %i ms and max %i ms need %i levels', (delayResolutionMs, maxDelayMs, levels) => {
    expect(exactLevelCount({ delayResolutionMs, maxDelayMs })).toBe(levels);
  });

  it.each([
    [0, 1000],
    [1.5, 1000],
    [1000, 0],
    [Number.NaN, 1000],
  ])('rejects R = %d ms and max %d ms with a ConfigError', (delayResolutionMs, maxDelayMs) => {
    expect(() => exactLevelCount({ delayResolutionMs, maxDelayMs })).toThrow(ConfigError);
  });
});

describe('exact names', () => {
  it('carry the resolution and the level count, so configurations never share queues', () => {
    // Prepare
    const hour = { delayResolutionMs: 1000, maxDelayMs: 3_600_000 };
    // Act / Assess
    expect(exactLevelName(hour, 3)).toBe('boomerang.delay.1000ms.L12.level-03');
    expect(exactLevelName(hour, 11)).toBe('boomerang.delay.1000ms.L12.level-11');
    expect(exactDeliveryExchangeName(hour)).toBe('boomerang.delay.1000ms.L12.deliver');
    expect(exactUnroutableName(hour)).toBe('boomerang.delay.unroutable');
  });

  it('start with exactNamePrefix when one is given', () => {
    // Prepare
    const prefixed = { ...options, exactNamePrefix: 'test-x' };
    // Act / Assess
    expect(exactLevelName(prefixed, 0)).toBe('test-x.1000ms.L4.level-00');
    expect(exactDeliveryExchangeName(prefixed)).toBe('test-x.1000ms.L4.deliver');
    expect(exactUnroutableName(prefixed)).toBe('test-x.unroutable');
  });
});

describe('exactDelayRoute', () => {
  it.each([
    // requested ms, routing key, level published to, real delay
    [10_000, '1.0.1.0.W', 3, 10_000], // 10 = 1010b
    [1, '0.0.0.1.W', 0, 1000], // 1 ms is one unit: never early
    [0, '0.0.0.1.W', 0, 1000], // at least one unit
    [-5, '0.0.0.1.W', 0, 1000],
    [1000, '0.0.0.1.W', 0, 1000],
    [1001, '0.0.1.0.W', 1, 2000], // rounded up
    [7000, '0.1.1.1.W', 2, 7000],
    [15_000, '1.1.1.1.W', 3, 15_000], // the maximum
    [86_400_000, '1.1.1.1.W', 3, 15_000], // above it: the maximum
    [Number.POSITIVE_INFINITY, '1.1.1.1.W', 3, 15_000],
    [Number.NaN, '1.1.1.1.W', 3, 15_000], // when in doubt, wait longer
  ])('routes %d ms as %s to level %i (%i ms)', (requestedDelayMs, routingKey, level, delayMs) => {
    // Act
    const route = exactDelayRoute(options, requestedDelayMs);
    // Assess
    expect(route).toEqual({ exchange: exactLevelName(options, level), routingKey, delayMs });
  });

  it('keeps the dots of the work queue name as words after the bits', () => {
    expect(exactDelayRoute({ ...options, workQueue: 'a.b' }, 3000).routingKey).toBe('0.0.1.1.a.b');
  });
});

describe('exactSharedTopology', () => {
  const topology = exactSharedTopology(options);

  it('declares the unroutable fanout, the delivery exchange with it as alternate, then levels high to low', () => {
    expect(topology.exchanges).toEqual([
      { name: 'boomerang.delay.unroutable', type: 'fanout', arguments: {} },
      {
        name: 'boomerang.delay.1000ms.L4.deliver',
        type: 'topic',
        arguments: { 'alternate-exchange': 'boomerang.delay.unroutable' },
      },
      ...[3, 2, 1, 0].map((level) => ({ name: exactLevelName(options, level), type: 'topic', arguments: {} })),
    ]);
  });

  it.each([
    // level, TTL, dead-letter exchange
    [3, 8000, 'boomerang.delay.1000ms.L4.level-02'],
    [2, 4000, 'boomerang.delay.1000ms.L4.level-01'],
    [1, 2000, 'boomerang.delay.1000ms.L4.level-00'],
    [0, 1000, 'boomerang.delay.1000ms.L4.deliver'],
  ])('level %i holds messages %i ms, then dead-letters to %s keeping the routing key', (level, ttl, below) => {
    // Act
    const queue = topology.queues.find((q) => q.name === exactLevelName(options, level));
    // Assess
    expect(queue).toEqual({
      name: exactLevelName(options, level),
      role: 'delay',
      onlyIfMissing: false,
      arguments: {
        'x-queue-type': 'quorum',
        'x-message-ttl': ttl,
        'x-dead-letter-exchange': below,
        'x-dead-letter-strategy': 'at-least-once',
        'x-overflow': 'reject-publish',
      },
    });
  });

  it('declares classic level queues without a dead-letter strategy', () => {
    // Act
    const classic = exactSharedTopology({ ...options, queueType: 'classic' });
    // Assess
    expect(classic.queues[0]?.arguments).toEqual({
      'x-queue-type': 'classic',
      'x-message-ttl': 8000,
      'x-dead-letter-exchange': 'boomerang.delay.1000ms.L4.level-02',
    });
  });

  it('keeps unroutable messages in a durable queue of the configured type', () => {
    expect(topology.queues.at(-1)).toEqual({
      name: 'boomerang.delay.unroutable',
      role: 'unroutable',
      onlyIfMissing: false,
      arguments: { 'x-queue-type': 'quorum' },
    });
  });

  it('binds each level queue on its bit = 1 and forwards bit = 0 to the level below', () => {
    // Prepare
    const level = (k: number): string => exactLevelName(options, k);
    // Act / Assess
    expect(topology.bindings).toEqual([
      { destinationKind: 'queue', destination: level(3), source: level(3), pattern: '1.*.*.*.#' },
      { destinationKind: 'exchange', destination: level(2), source: level(3), pattern: '0.*.*.*.#' },
      { destinationKind: 'queue', destination: level(2), source: level(2), pattern: '*.1.*.*.#' },
      { destinationKind: 'exchange', destination: level(1), source: level(2), pattern: '*.0.*.*.#' },
      { destinationKind: 'queue', destination: level(1), source: level(1), pattern: '*.*.1.*.#' },
      { destinationKind: 'exchange', destination: level(0), source: level(1), pattern: '*.*.0.*.#' },
      { destinationKind: 'queue', destination: level(0), source: level(0), pattern: '*.*.*.1.#' },
      { destinationKind: 'exchange', destination: exactDeliveryExchangeName(options), source: level(0), pattern: '*.*.*.0.#' },
      { destinationKind: 'queue', destination: exactUnroutableName(options), source: exactUnroutableName(options), pattern: '' },
    ]);
  });
});

describe('exactWorkBinding', () => {
  it.each([
    ['W', '*.*.*.*.W'],
    ['a.b', '*.*.*.*.a.b'], // exactly L stars: `b` can never match a message for `a.b`
  ])('binds %s on the delivery exchange with %s', (workQueue, pattern) => {
    expect(exactWorkBinding(options, workQueue)).toEqual({
      destinationKind: 'queue',
      destination: workQueue,
      source: 'boomerang.delay.1000ms.L4.deliver',
      pattern,
    });
  });
});

describe('assertExactQueueName', () => {
  it.each(['a*b', 'a#b', 'orders.v2', 'a..b', 'é'.repeat(123), 'w'.repeat(247)])('accepts %s', (workQueue) => {
    expect(() => assertExactQueueName(options, workQueue)).not.toThrow();
  });

  it.each(['*', '#', 'a.*', 'a.#.b', '*.a'])('rejects %s: a wildcard word would match other queues', (workQueue) => {
    expect(() => assertExactQueueName(options, workQueue)).toThrow(`Queue '${workQueue}' cannot use exact delays`);
  });

  it.each([
    ['w'.repeat(248), 248], // 8 bytes of bits (L = 4) + 248 = 256
    ['é'.repeat(124), 248], // UTF-8 bytes count, not characters
  ])('rejects a name whose routing key would pass 255 bytes', (workQueue, bytes) => {
    expect(() => assertExactQueueName(options, workQueue)).toThrow(
      `8 bytes of delay bits + ${bytes} bytes of name, over the AMQP limit of 255 bytes; with these levels a queue name may have at most 247 bytes`,
    );
  });
});
