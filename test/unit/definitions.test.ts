import { describe, expect, it } from 'vitest';
import { topologyDefinitions } from '../../shared/topology/definitions.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import { topologyOptions } from '../helpers/topology.js';

describe('topologyDefinitions', () => {
  it('writes each queue of a tiers plan durable, in the vhost, with its arguments as planned', () => {
    // Prepare
    const plan = buildTopologyPlan(topologyOptions({ tierDelaysMs: [1000] }));
    // Act
    const definitions = topologyDefinitions(plan, '/');
    // Assess
    // The delay-path marker only, last (see plan.ts)
    expect(definitions.exchanges).toEqual([
      { name: plan.marker, vhost: '/', durable: true, auto_delete: false, type: 'fanout', internal: false, arguments: {} },
    ]);
    expect(definitions.bindings).toEqual([]);
    expect(definitions.queues).toEqual([
      { name: 'orders.parking', vhost: '/', durable: true, auto_delete: false, arguments: { 'x-queue-type': 'quorum' } },
      { name: 'orders.parking.notes', vhost: '/', durable: true, auto_delete: false, arguments: { 'x-queue-type': 'quorum', 'x-max-length': 10_000 } },
      {
        name: 'orders',
        vhost: '/',
        durable: true,
        auto_delete: false,
        arguments: {
          'x-queue-type': 'quorum',
          'x-dead-letter-exchange': '',
          'x-dead-letter-routing-key': 'orders.parking',
          'x-dead-letter-strategy': 'at-least-once',
          'x-overflow': 'reject-publish',
        },
      },
      {
        name: 'orders.delay.1000ms',
        vhost: '/',
        durable: true,
        auto_delete: false,
        arguments: {
          'x-queue-type': 'quorum',
          'x-message-ttl': 1000,
          'x-dead-letter-exchange': '',
          'x-dead-letter-routing-key': 'orders',
          'x-dead-letter-strategy': 'at-least-once',
          'x-overflow': 'reject-publish',
        },
      },
    ]);
  });

  it('writes the exchanges and both kinds of binding of an exact plan', () => {
    // Prepare
    const plan = buildTopologyPlan(topologyOptions({ delayMode: 'exact', queueType: 'classic', delayResolutionMs: 1000, maxDelayMs: 3000 }));
    // Act
    const definitions = topologyDefinitions(plan, 'prod');
    // Assess
    expect(definitions.exchanges.map((x) => [x.name, x.type, x.arguments])).toEqual([
      ...plan.exchanges.map((x) => [x.name, x.type, x.arguments]),
      [plan.marker, 'fanout', {}],
    ]);
    expect(definitions.exchanges.every((x) => x.vhost === 'prod' && x.durable && !x.auto_delete && !x.internal)).toBe(true);
    expect(definitions.bindings).toHaveLength(plan.bindings.length);
    expect(definitions.bindings).toContainEqual({
      source: 'boomerang.delay.1000ms.L2.level-01',
      vhost: 'prod',
      destination: 'boomerang.delay.1000ms.L2.level-00',
      destination_type: 'exchange',
      routing_key: '0.*.#',
      arguments: {},
    });
    expect(definitions.bindings).toContainEqual({
      source: 'boomerang.delay.1000ms.L2.deliver',
      vhost: 'prod',
      destination: 'orders',
      destination_type: 'queue',
      routing_key: '*.*.orders',
      arguments: {},
    });
  });

  it('copies the arguments: the definitions never share objects with the plan', () => {
    // Prepare
    const plan = buildTopologyPlan(topologyOptions());
    // Act
    const definitions = topologyDefinitions(plan, '/');
    // Assess
    expect(definitions.queues[0]?.arguments).toEqual(plan.queues[0]?.arguments);
    expect(definitions.queues[0]?.arguments).not.toBe(plan.queues[0]?.arguments);
  });
});
