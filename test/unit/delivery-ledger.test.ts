import type { ConsumeMessage } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { DeliveryLedger } from '../../shared/delivery-ledger.js';
import { emptySummary } from '../../shared/summary.js';
import { FakeChannel, fakeDelivery } from '../helpers/fakes.js';

/** One way of settling a delivery; returns what the ledger said. */
type Settle = (ledger: DeliveryLedger, delivery: ConsumeMessage) => boolean;

function setUp(deliveries = 1) {
  const channel = new FakeChannel();
  const summary = emptySummary();
  const ledger = new DeliveryLedger(channel.asChannel(), summary);
  const open = Array.from({ length: deliveries }, (_, i) => fakeDelivery({ deliveryTag: i + 1 }));
  for (const delivery of open) ledger.received(delivery);
  return { channel, summary, ledger, open };
}

describe('DeliveryLedger', () => {
  it('counts each delivery received and holds it open until settled', () => {
    // Prepare
    const { ledger, summary, open } = setUp(3);
    // Act
    ledger.ack(open[0]!, 'acked');
    // Assess
    expect(summary.received).toBe(3);
    expect(ledger.outstanding).toBe(2);
    expect(ledger.isOpen(open[0]!)).toBe(false);
    expect(ledger.isOpen(open[1]!)).toBe(true);
  });

  it.each(['acked', 'retried', 'parked', 'lost'] as const)('acks once and counts %s', (outcome) => {
    // Prepare
    const { ledger, summary, channel, open } = setUp();
    // Act
    const settled = ledger.ack(open[0]!, outcome);
    // Assess
    expect(settled).toBe(true);
    expect(channel.acks).toEqual([open[0]]);
    expect(summary[outcome]).toBe(1);
  });

  it('requeues with nack(requeue=true) and counts requeued', () => {
    // Prepare
    const { ledger, summary, channel, open } = setUp();
    // Act
    const settled = ledger.requeue(open[0]!);
    // Assess
    expect(settled).toBe(true);
    expect(channel.nacks).toEqual([{ message: open[0], allUpTo: false, requeue: true }]);
    expect(channel.acks).toEqual([]);
    expect(summary.requeued).toBe(1);
  });

  it.each<[string, Settle, Record<string, number>]>([
    ['ack after requeue', (l, d) => { l.requeue(d); return l.ack(d, 'retried'); }, { requeued: 1, retried: 0 }],
    ['requeue after ack', (l, d) => { l.ack(d, 'retried'); return l.requeue(d); }, { requeued: 0, retried: 1 }],
    ['ack after ack', (l, d) => { l.ack(d, 'retried'); return l.ack(d, 'retried'); }, { requeued: 0, retried: 1 }],
    ['requeue after requeue', (l, d) => { l.requeue(d); return l.requeue(d); }, { requeued: 1, retried: 0 }],
  ])('settles a delivery only once: %s does nothing', (_name, settleTwice, counts) => {
    // Prepare
    const { ledger, summary, channel, open } = setUp();
    // Act
    const secondSettled = settleTwice(ledger, open[0]!);
    // Assess
    expect(secondSettled).toBe(false);
    expect(channel.acks.length + channel.nacks.length).toBe(1);
    expect(summary).toMatchObject(counts);
  });

  it('acks without counting when no outcome is given, and counts it later', () => {
    // Prepare
    const { ledger, summary, channel, open } = setUp();
    // Act
    ledger.ack(open[0]!);
    const before = { ...summary };
    ledger.count('parked');
    // Assess
    expect(channel.acks).toHaveLength(1);
    expect(before).toMatchObject({ acked: 0, retried: 0, parked: 0, lost: 0 });
    expect(summary.parked).toBe(1);
  });

  it('requeueAll gives back every open delivery and leaves the settled ones alone', () => {
    // Prepare
    const { ledger, summary, channel, open } = setUp(3);
    ledger.ack(open[1]!, 'acked');
    // Act
    const given = ledger.requeueAll();
    // Assess
    expect(given).toBe(2);
    expect(channel.nacks.map((n) => n.message)).toEqual([open[0], open[2]]);
    expect(channel.nacks.every((n) => n.requeue)).toBe(true);
    expect(ledger.outstanding).toBe(0);
    expect(summary).toMatchObject({ received: 3, acked: 1, requeued: 2 });
    expect(ledger.requeueAll()).toBe(0);
  });

  it.each<[string, Settle, 'retried' | 'requeued']>([
    ['ack', (l, d) => l.ack(d, 'retried'), 'retried'],
    ['requeue', (l, d) => l.requeue(d), 'requeued'],
  ])('swallows the throw of %s on a closed channel and still counts it', (_name, settle, outcome) => {
    // Prepare
    const { ledger, summary, channel, open } = setUp();
    channel.closed = true;
    // Act
    const settled = settle(ledger, open[0]!);
    // Assess
    expect(settled).toBe(true);
    expect(summary[outcome]).toBe(1);
    expect(ledger.isOpen(open[0]!)).toBe(false);
  });

  describe('hold and flush', () => {
    it('counts acks at once but sends them only on flush, as one multiple ack up to the highest tag', () => {
      // Prepare: settled out of tag order
      const { ledger, summary, channel, open } = setUp(4);
      ledger.hold();
      // Act
      ledger.ack(open[2]!, 'deferred');
      ledger.ack(open[0]!, 'acked');
      ledger.ack(open[1]!, 'retried');
      const sentBeforeFlush = channel.acks.length;
      ledger.flush();
      // Assess
      expect(sentBeforeFlush).toBe(0);
      expect(summary).toMatchObject({ acked: 1, retried: 1, deferred: 1 });
      expect(channel.multiples).toEqual([{ kind: 'ack', tag: 3 }]);
      expect(channel.acks).toEqual([open[2]]);
    });

    it('still sends a requeue at once while holding, so a multiple ack never covers it', () => {
      // Prepare
      const { ledger, channel, open } = setUp(3);
      ledger.hold();
      // Act
      ledger.requeue(open[2]!);
      ledger.ack(open[0]!, 'acked');
      // Assess
      expect(channel.nacks).toEqual([{ message: open[2], allUpTo: false, requeue: true }]);
      expect(channel.acks).toEqual([]);
    });

    it('sends at once again after a flush, and a flush with nothing held sends nothing', () => {
      // Prepare
      const { ledger, channel, open } = setUp(2);
      ledger.hold();
      ledger.flush();
      // Act
      ledger.ack(open[0]!, 'acked');
      // Assess
      expect(channel.acks).toEqual([open[0]]);
      expect(channel.multiples).toEqual([]);
    });

    it('swallows the throw of a flush on a closed channel', () => {
      // Prepare
      const { ledger, channel, open } = setUp(1);
      ledger.hold();
      ledger.ack(open[0]!, 'acked');
      channel.closed = true;
      // Act, Assess
      expect(() => ledger.flush()).not.toThrow();
    });
  });
});
