import { describe, expect, it } from 'vitest';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import { noLongerNeeded, planSummary } from '../../shared/topology/plan-summary.js';
import { topologyOptions } from '../helpers/topology.js';

describe('planSummary', () => {
  it('names every queue and exchange of the plan, the delay-path marker last', () => {
    // Act
    const summary = planSummary(buildTopologyPlan(topologyOptions({ tierDelaysMs: [1000, 5000] })));
    // Assess
    expect(summary.entities.slice(0, 5)).toEqual([
      'queue orders.parking',
      'queue orders.parking.notes',
      'queue orders',
      'queue orders.delay.1000ms',
      'queue orders.delay.5000ms',
    ]);
    expect(summary.entities).toHaveLength(6);
    expect(summary.entities[5]).toMatch(/^exchange orders\.delay-path\.[0-9a-f]{16}$/);
    expect(summary.digest).toMatch(/^[0-9a-f]{16}$/);
  });

  it.each([
    ['another tier', { tierDelaysMs: [1000, 6000] }],
    ['another queue type', { queueType: 'classic' as const }],
    ['exact mode', { delayMode: 'exact' as const }],
  ])('changes its digest with %s, and keeps it for the same plan', (_what, change) => {
    // Prepare
    const base = planSummary(buildTopologyPlan(topologyOptions()));
    // Act
    const changed = planSummary(buildTopologyPlan(topologyOptions(change)));
    // Assess
    expect(changed.digest).not.toBe(base.digest);
    expect(planSummary(buildTopologyPlan(topologyOptions())).digest).toBe(base.digest);
  });
});

describe('noLongerNeeded', () => {
  it('lists what the old plan had and the new one lacks (fewer tiers: a delay queue and the old marker)', () => {
    // Prepare
    const before = planSummary(buildTopologyPlan(topologyOptions({ tierDelaysMs: [1000, 5000, 30_000] }))).entities;
    const after = planSummary(buildTopologyPlan(topologyOptions({ tierDelaysMs: [1000, 5000] }))).entities;
    // Act
    const dropped = noLongerNeeded(before, after);
    // Assess
    expect(dropped).toEqual(['queue orders.delay.30000ms', before.at(-1)]);
  });

  it('lists nothing for the same plan, and ignores what is not an entity', () => {
    // Act, Assess
    expect(noLongerNeeded(['queue a', 'exchange b'], ['queue a', 'exchange b'])).toEqual([]);
    expect(noLongerNeeded(['bogus', '', 'queue x'], [])).toEqual(['queue x']);
  });
});
