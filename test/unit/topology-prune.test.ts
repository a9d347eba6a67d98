import { describe, expect, it } from 'vitest';
import { pruneCandidates } from '../../shared/topology/prune.js';
import { topologyOptions } from '../helpers/topology.js';

describe('pruneCandidates', () => {
  it.each([
    ['a tier the plan no longer has', 'orders.delay.30000ms', { kind: 'queue' }],
    ['an old delay-path marker', 'orders.delay-path.0123456789abcdef', { kind: 'exchange' }],
    ['a tier the plan still has', 'orders.delay.5000ms', { kind: 'left', why: 'the current plan needs it' }],
    ['the work queue', 'orders', { kind: 'left', why: 'the current plan needs it' }],
    ['the parking lot', 'orders.parking', { kind: 'left', why: 'the current plan needs it' }],
    ['a shared level of exact mode', 'boomerang.delay.1000ms.L4.level-03', { kind: 'left', why: expect.stringContaining('a shared level of exact mode') }],
    ["another work queue's tier", 'payments.delay.30000ms', { kind: 'left', why: 'not part of the delay path of orders' }],
    ['a name that only starts like a tier', 'orders.delay.30000ms.copy', { kind: 'left', why: 'not part of the delay path of orders' }],
    ['a marker with another digest length', 'orders.delay-path.abc', { kind: 'left', why: 'not part of the delay path of orders' }],
  ])('sorts %s', (_what, name, expected) => {
    // Act
    const [candidate] = pruneCandidates(topologyOptions({ tierDelaysMs: [1000, 5000] }), [name]);
    // Assess
    expect(candidate).toEqual({ name, ...expected });
  });

  it('reads a work queue name with regular expression characters literally, and lists each name once', () => {
    // Act
    const candidates = pruneCandidates(topologyOptions({ workQueue: 'a+b', parkingQueue: 'a+b.parked' }), ['a+b.delay.1ms', 'aab.delay.1ms', 'a+b.delay.1ms']);
    // Assess
    expect(candidates.map((c) => c.kind)).toEqual(['queue', 'left']);
  });
});
