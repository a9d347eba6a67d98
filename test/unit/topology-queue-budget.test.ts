import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/errors.js';
import { assertDelayQueueBudget, plannedDelayQueueCount } from '../../shared/topology/queue-budget.js';
import type { TopologyOptions } from '../../shared/topology/types.js';

const BASE: TopologyOptions = {
  workQueue: 'orders',
  parkingQueue: 'orders.parked',
  delayMode: 'tiers',
  queueType: 'quorum',
  tierDelaysMs: [1000, 2000],
  delayResolutionMs: 1000,
  maxDelayMs: 3_600_000,
};

const tiers = (count: number): number[] => Array.from({ length: count }, (_, i) => 1000 + i);

describe('plannedDelayQueueCount', () => {
  it.each([
    ['tiers: one per tier', { tierDelaysMs: tiers(13) }, 13],
    ['exact: 12 levels for 1 h at 1 s, plus the unroutable keeper', { delayMode: 'exact' }, 13],
    ['exact: 28 levels for 2^31 ms at 10 ms, plus the keeper', { delayMode: 'exact', delayResolutionMs: 10, maxDelayMs: 2 ** 31 - 1 }, 29],
  ] as const)('%s', (_name, overrides, expected) => {
    expect(plannedDelayQueueCount({ ...BASE, ...overrides })).toBe(expected);
  });
});

describe('assertDelayQueueBudget', () => {
  it.each([[tiers(0)], [tiers(100)]])('accepts %#', (tierDelaysMs) => {
    expect(() => assertDelayQueueBudget({ ...BASE, tierDelaysMs })).not.toThrow();
  });

  it('refuses 101 tiers, saying how many and which settings to change', () => {
    // Act
    const act = (): void => assertDelayQueueBudget({ ...BASE, tierDelaysMs: tiers(101) });
    // Assess
    expect(act).toThrow(ConfigError);
    expect(act).toThrow(/would plan 101 delay queues for 'orders', over the limit of 100: .*MAX_RETRIES.*BACKOFF_MULTIPLIER.*DELAY_MODE=exact/);
  });
});
