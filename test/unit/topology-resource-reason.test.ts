import { describe, expect, it } from 'vitest';
import { appliedReason, keptReason, mismatchReason } from '../../shared/topology/resource-reason.js';

describe('mismatchReason', () => {
  it('names every differing argument of every entity, what to run about each, and that nothing changed', () => {
    // Prepare
    const differences = [
      { kind: 'queue' as const, name: 'orders.delay.1000ms', argument: 'x-message-ttl', expected: '2000', actual: '1000' },
      { kind: 'queue' as const, name: 'orders.delay.1000ms', argument: 'x-queue-type', expected: 'quorum', actual: undefined },
      { kind: 'queue' as const, name: 'orders.parked', argument: 'x-delivery-limit', expected: '-1', actual: '20' },
    ];
    // Act
    const reason = mismatchReason(
      'orders',
      differences,
      new Map([
        ['orders.delay.1000ms', 0],
        ['orders.parked', 3],
      ]),
    );
    // Assess
    expect(reason).toBe(
      'TopologyMismatchError: 2 existing entities differ from the plan of orders; nothing was changed. ' +
        "queue 'orders.delay.1000ms': x-message-ttl is '1000', the plan wants '2000', x-queue-type is (not set), the plan wants 'quorum'; empty: delete it (rabbitmqctl delete_queue 'orders.delay.1000ms'). " +
        "queue 'orders.parked': x-delivery-limit is '20', the plan wants '-1'; 3 message(s): move them first (shovel), then delete it. " +
        "Then deploy again, or change the queue's configuration back. `boomerang topology verify --function orders` shows the same.",
    );
  });
});

describe('appliedReason', () => {
  it('counts what was created and what was there, and names what the old plan leaves with the prune command', () => {
    // Prepare
    const report = {
      items: [
        { kind: 'queue' as const, name: 'orders.parked', status: 'created' as const },
        { kind: 'queue' as const, name: 'orders', status: 'exists' as const },
        { kind: 'queue' as const, name: 'orders.delay.1000ms', status: 'unchanged' as const },
      ],
      warnings: [],
    };
    // Act
    const reason = appliedReason('orders', report, '4.3.6', ['queue orders.delay.30000ms', 'exchange orders.delay-path.0123456789abcdef']);
    // Assess
    expect(reason).toBe(
      'Topology of orders applied on RabbitMQ 4.3.6: 1 created, 2 already in place, 0 bindings. No longer needed, left in place: orders.delay.30000ms, orders.delay-path.0123456789abcdef; ' +
        '`boomerang topology prune --function orders --name orders.delay.30000ms --name orders.delay-path.0123456789abcdef` lists them and, with --yes, deletes the empty ones.',
    );
  });
});

describe('keptReason', () => {
  it('says nothing was deleted and what stays, with the message counts it read', () => {
    // Act
    const reason = keptReason('orders', [{ entity: 'queue orders', messageCount: 2 }, { entity: 'exchange orders.delay-path.ab' }]);
    // Assess
    expect(reason).toBe(
      'Nothing deleted: the queues and exchanges of orders stay on the broker with their messages: orders (2 messages), orders.delay-path.ab. Delete them by hand once the queue is retired.',
    );
  });
});
