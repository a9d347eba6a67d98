import { describe, expect, it } from 'vitest';
import { exactLevelName } from '../../shared/topology/exact-names.js';
import { destinations } from '../../shared/copy/delay-path-check.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import { topologyOptions } from '../helpers/topology.js';

describe('destinations', () => {
  it.each([
    {
      mode: 'tiers',
      options: topologyOptions({ tierDelaysMs: [1000, 5000] }),
      expected: ['queue orders', 'queue orders.parking', 'queue orders.delay.1000ms', 'queue orders.delay.5000ms'],
    },
    { mode: 'tiers without a tier (MAX_RETRIES=0)', options: topologyOptions({ tierDelaysMs: [] }), expected: ['queue orders', 'queue orders.parking'] },
  ])('lists the work queue, the parking lot and each tier queue in $mode mode', ({ options, expected }) => {
    expect(destinations(options)).toEqual(expected);
  });

  it.each([
    { maxDelayMs: 1000, levels: 1 },
    { maxDelayMs: 3000, levels: 2 },
    { maxDelayMs: 3_600_000, levels: 12 },
  ])('lists every level exchange in exact mode, up to $maxDelayMs ms ($levels levels)', ({ maxDelayMs, levels }) => {
    // Prepare
    const options = topologyOptions({ delayMode: 'exact', delayResolutionMs: 1000, maxDelayMs });
    const planned = new Set(buildTopologyPlan(options).exchanges.map((x) => `exchange ${x.name}`));
    // Act
    const exchanges = destinations(options).filter((d) => d.startsWith('exchange'));
    // Assess: each level once, all of them planned
    expect(exchanges).toEqual(Array.from({ length: levels }, (_, level) => `exchange ${exactLevelName(options, level)}`));
    for (const exchange of exchanges) expect(planned).toContain(exchange);
  });
});
