import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/errors.js';
import { exactLevelName } from '../../shared/topology/exact-names.js';
import { buildTopologyPlan, delayPathMarker, delayRoute } from '../../shared/topology/plan.js';
import type { QueueType } from '../../shared/topology/types.js';
import { topologyOptions } from '../helpers/topology.js';

const tiers = topologyOptions({ tierDelaysMs: [1000, 5000] });
const exact = topologyOptions({ delayMode: 'exact', delayResolutionMs: 1000, maxDelayMs: 3000 });

describe('buildTopologyPlan', () => {
  it('plans the parking lot, its park notes, the work queue and one delay queue per tier in tiers mode', () => {
    // Act
    const plan = buildTopologyPlan(tiers);
    // Assess
    expect(plan.exchanges).toEqual([]);
    expect(plan.bindings).toEqual([]);
    expect(plan.queues.map((q) => [q.name, q.role])).toEqual([
      ['orders.parking', 'parking'],
      ['orders.parking.notes', 'notes'],
      ['orders', 'work'],
      ['orders.delay.1000ms', 'delay'],
      ['orders.delay.5000ms', 'delay'],
    ]);
  });

  it('plans the shared levels and binds the work queue on the delivery exchange last in exact mode', () => {
    // Act
    const plan = buildTopologyPlan(exact);
    // Assess
    expect(plan.exchanges.map((x) => x.name)).toEqual([
      'boomerang.delay.unroutable',
      'boomerang.delay.1000ms.L2.deliver',
      'boomerang.delay.1000ms.L2.level-01',
      'boomerang.delay.1000ms.L2.level-00',
    ]);
    expect(plan.queues.map((q) => [q.name, q.role])).toEqual([
      ['orders.parking', 'parking'],
      ['orders.parking.notes', 'notes'],
      ['orders', 'work'],
      ['boomerang.delay.1000ms.L2.level-01', 'delay'],
      ['boomerang.delay.1000ms.L2.level-00', 'delay'],
      ['boomerang.delay.unroutable', 'unroutable'],
    ]);
    expect(plan.bindings.at(-1)).toEqual({
      destinationKind: 'queue',
      destination: 'orders',
      source: 'boomerang.delay.1000ms.L2.deliver',
      pattern: '*.*.orders',
    });
  });

  it.each<[QueueType, Record<string, string>]>([
    ['quorum', { 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' }],
    ['classic', {}],
  ])('declares a missing %s work queue that dead-letters to the parking lot', (queueType, safety) => {
    // Act
    const [parking, notes, work] = buildTopologyPlan({ ...tiers, queueType }).queues;
    // Assess
    expect(parking).toEqual({ name: 'orders.parking', role: 'parking', onlyIfMissing: false, arguments: { 'x-queue-type': queueType } });
    expect(notes).toEqual({
      name: 'orders.parking.notes',
      role: 'notes',
      onlyIfMissing: false,
      arguments: { 'x-queue-type': queueType, 'x-max-length': 10_000 },
    });
    expect(work).toEqual({
      name: 'orders',
      role: 'work',
      onlyIfMissing: true,
      arguments: {
        'x-queue-type': queueType,
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': 'orders.parking',
        ...safety,
      },
    });
  });

  describe.each([
    ['tiers', tiers],
    ['exact', exact],
  ])('in %s mode', (_, options) => {
    it.each<QueueType>(['quorum', 'classic'])('gives every %s queue its type and never an expiry', (queueType) => {
      const queues = buildTopologyPlan({ ...options, queueType }).queues;
      expect(queues.every((q) => q.arguments['x-queue-type'] === queueType && !('x-expires' in q.arguments))).toBe(true);
    });

    it('makes dead-lettering at-least-once on every quorum queue that dead-letters', () => {
      const dlq = buildTopologyPlan(options).queues.filter((q) => 'x-dead-letter-exchange' in q.arguments);
      expect(dlq.length).toBeGreaterThan(1);
      for (const queue of dlq) {
        expect(queue.arguments).toMatchObject({ 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' });
      }
    });

    it('sets no dead-letter strategy or overflow mode on classic queues', () => {
      const queues = buildTopologyPlan({ ...options, queueType: 'classic' }).queues;
      expect(queues.filter((q) => 'x-dead-letter-strategy' in q.arguments || 'x-overflow' in q.arguments)).toEqual([]);
    });
  });

  it.each([
    ['an empty work queue name', { workQueue: '' }],
    ['a parking queue name over 255 bytes', { parkingQueue: 'p'.repeat(256) }],
    ['a parking queue name that leaves no room for its notes queue', { parkingQueue: 'p'.repeat(250) }],
  ])('rejects %s', (_, overrides) => {
    expect(() => buildTopologyPlan({ ...tiers, ...overrides })).toThrow(ConfigError);
  });

  it('rejects a wildcard work queue name in exact mode only', () => {
    // Prepare
    const workQueue = 'orders.#';
    // Act / Assess
    expect(() => buildTopologyPlan({ ...exact, workQueue })).toThrow(ConfigError);
    expect(() => buildTopologyPlan({ ...tiers, workQueue })).not.toThrow();
  });
});

describe('delayRoute', () => {
  it('uses the tier queues in tiers mode', () => {
    expect(delayRoute(tiers, 1200)).toEqual({ exchange: '', routingKey: 'orders.delay.5000ms', delayMs: 5000 });
  });

  it('uses the binary levels in exact mode', () => {
    expect(delayRoute(exact, 1200)).toEqual({ exchange: exactLevelName(exact, 1), routingKey: '1.0.orders', delayMs: 2000 });
  });
});

describe('delayPathMarker', () => {
  const tiers = topologyOptions({ workQueue: 'orders', parkingQueue: 'orders.parking', tierDelaysMs: [1000, 5000] });
  it.each([
    { change: 'another tier', options: { ...tiers, tierDelaysMs: [1000, 6000] } },
    { change: 'another parking lot', options: { ...tiers, parkingQueue: 'orders.parked' } },
    { change: 'exact mode', options: { ...tiers, delayMode: 'exact' as const } },
    { change: 'another exact name prefix', options: { ...tiers, delayMode: 'exact' as const, exactNamePrefix: 'team-a' } },
  ])('names another marker for $change', ({ options }) => {
    expect(delayPathMarker(options)).not.toBe(delayPathMarker(tiers));
  });

  it('names the same marker for the same destinations, in the plan too, after the work queue', () => {
    // Act
    const marker = delayPathMarker(tiers);
    // Assess: arguments that route nothing (the queue type) do not change it
    expect(marker).toMatch(/^orders\.delay-path\.[0-9a-f]{16}$/);
    expect(delayPathMarker({ ...tiers })).toBe(marker);
    expect(delayPathMarker({ ...tiers, queueType: 'classic' })).toBe(marker);
    expect(buildTopologyPlan(tiers).marker).toBe(marker);
  });

  it('makes no marker when its name would pass 255 bytes', () => {
    // Prepare: a 240-character work queue
    const long = 'q'.repeat(240);
    // Act + Assess
    expect(delayPathMarker({ ...tiers, workQueue: long })).toBeUndefined();
    expect(buildTopologyPlan({ ...tiers, workQueue: long }).marker).toBeUndefined();
  });
});
