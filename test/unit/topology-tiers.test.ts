import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/errors.js';
import { tierDelayQueues, tierDelayRoute, tierQueueName } from '../../shared/topology/tiers.js';
import { topologyOptions } from '../helpers/topology.js';

describe('tierQueueName', () => {
  it('names the delay queue after the work queue and the delay', () => {
    expect(tierQueueName('orders', 5000)).toBe('orders.delay.5000ms');
  });
});

describe('tierDelayRoute', () => {
  it.each([
    // requested, tier it snaps to
    [0, 1000], // below the first tier
    [1, 1000],
    [1000, 1000], // exactly on a tier
    [1001, 5000], // between tiers: up, never early
    [5000, 5000],
    [29_999, 30_000],
    [30_000, 30_000], // the largest tier
    [30_001, 30_000], // above every tier: the largest
    [86_400_000, 30_000],
    [Number.NaN, 30_000], // when in doubt, wait longer
  ])('snaps %d ms up to the %i ms tier', (requestedDelayMs, tier) => {
    // Act
    const route = tierDelayRoute(topologyOptions(), requestedDelayMs);
    // Assess
    expect(route).toEqual({ exchange: '', routingKey: `orders.delay.${tier}ms`, delayMs: tier });
  });

  it.each([
    ['no tiers', []],
    ['descending tiers', [5000, 1000]],
    ['a repeated tier', [1000, 1000]],
    ['a negative tier', [-1, 1000]],
    ['a fractional tier', [1.5]],
  ])('rejects %s with a ConfigError', (_, tierDelaysMs) => {
    expect(() => tierDelayRoute(topologyOptions({ tierDelaysMs }), 1000)).toThrow(ConfigError);
  });
});

describe('tierDelayQueues', () => {
  it('declares no delay queue when retries are disabled (MAX_RETRIES=0 gives no tiers)', () => {
    expect(tierDelayQueues(topologyOptions({ tierDelaysMs: [] }))).toEqual([]);
  });

  it('declares one quorum queue per tier that dead-letters back to the work queue only', () => {
    // Act
    const queues = tierDelayQueues(topologyOptions({ tierDelaysMs: [1000, 5000] }));
    // Assess
    expect(queues).toEqual(
      [1000, 5000].map((delayMs) => ({
        name: `orders.delay.${delayMs}ms`,
        role: 'delay',
        onlyIfMissing: false,
        arguments: {
          'x-queue-type': 'quorum',
          'x-message-ttl': delayMs,
          'x-dead-letter-exchange': '',
          'x-dead-letter-routing-key': 'orders',
          'x-dead-letter-strategy': 'at-least-once',
          'x-overflow': 'reject-publish',
        },
      })),
    );
  });

  it('declares classic queues without a dead-letter strategy or overflow mode', () => {
    // Act
    const [queue] = tierDelayQueues(topologyOptions({ queueType: 'classic', tierDelaysMs: [2000] }));
    // Assess
    expect(queue?.arguments).toEqual({
      'x-queue-type': 'classic',
      'x-message-ttl': 2000,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': 'orders',
    });
  });

  it('never sets a queue expiry (an expired queue loses its messages)', () => {
    const queues = tierDelayQueues(topologyOptions());
    expect(queues.filter((queue) => 'x-expires' in queue.arguments)).toEqual([]);
  });

  it('rejects a work queue whose delay queue name would pass 255 bytes', () => {
    // Prepare
    const workQueue = 'w'.repeat(250);
    // Act / Assess
    expect(() => tierDelayQueues(topologyOptions({ workQueue }))).toThrow(/1 to 255 bytes/);
  });
});
