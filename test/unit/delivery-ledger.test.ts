import type { ConsumeMessage } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { DeliveryLedger } from '../../shared/pull/delivery-ledger.js';
import { Tally } from '../../shared/core/tally.js';
import { FakeChannel, fakeDelivery } from '../helpers/fakes.js';

/** One way of settling a delivery; returns what the ledger said. */
type Settle = (ledger: DeliveryLedger, delivery: ConsumeMessage) => boolean;

/** A ledger holding `deliveries` open deliveries (tags 1…n); `endTurn()` runs what it scheduled. */
function setUp(deliveries = 1) {
  const channel = new FakeChannel();
  const tally = new Tally();
  const summary = tally.current;
  const scheduled: (() => void)[] = [];
  const ledger = new DeliveryLedger(channel.asChannel(), tally, (send) => scheduled.push(send));
  const open = Array.from({ length: deliveries }, (_, i) => fakeDelivery({ deliveryTag: i + 1 }));
  for (const delivery of open) ledger.received(delivery);
  const endTurn = (): void => {
    for (const send of scheduled.splice(0)) send();
  };
  return { channel, summary, ledger, open, endTurn };
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
    const { ledger, summary, channel, open, endTurn } = setUp();
    // Act
    const settled = ledger.ack(open[0]!, outcome);
    endTurn();
    // Assess
    expect(settled).toBe(true);
    expect(channel.acks).toEqual([open[0]]);
    expect(channel.multiples).toEqual([]);
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
    [
      'ack after requeue',
      (l, d) => {
        l.requeue(d);
        return l.ack(d, 'retried');
      },
      { requeued: 1, retried: 0 },
    ],
    [
      'requeue after ack',
      (l, d) => {
        l.ack(d, 'retried');
        return l.requeue(d);
      },
      { requeued: 0, retried: 1 },
    ],
    [
      'ack after ack',
      (l, d) => {
        l.ack(d, 'retried');
        return l.ack(d, 'retried');
      },
      { requeued: 0, retried: 1 },
    ],
    [
      'requeue after requeue',
      (l, d) => {
        l.requeue(d);
        return l.requeue(d);
      },
      { requeued: 1, retried: 0 },
    ],
  ])('settles a delivery only once: %s does nothing', (_name, settleTwice, counts) => {
    // Prepare
    const { ledger, summary, channel, open, endTurn } = setUp();
    // Act
    const secondSettled = settleTwice(ledger, open[0]!);
    endTurn();
    // Assess
    expect(secondSettled).toBe(false);
    expect(channel.acks.length + channel.nacks.length).toBe(1);
    expect(summary).toMatchObject(counts);
  });

  it('ackAtOnce sends the ack before returning, without counting; count() counts it later', () => {
    // Prepare
    const { ledger, summary, channel, open } = setUp(2);
    // Act: open[0]'s ack waits for the turn's end, open[1]'s does not
    ledger.ack(open[0]!, 'acked');
    const settled = ledger.ackAtOnce(open[1]!);
    const sent = [...channel.acks];
    const countsBefore = { retried: summary.retried, parked: summary.parked, lost: summary.lost };
    ledger.count(open[1]!, 'parked');
    // Assess
    expect(settled).toBe(true);
    expect(sent).toEqual([open[1]]);
    expect(ledger.ackAtOnce(open[1]!)).toBe(false);
    expect(countsBefore).toEqual({ retried: 0, parked: 0, lost: 0 });
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
    const { ledger, summary, channel, open, endTurn } = setUp();
    channel.closed = true;
    // Act
    const settled = settle(ledger, open[0]!);
    endTurn();
    // Assess
    expect(settled).toBe(true);
    expect(summary[outcome]).toBe(1);
    expect(ledger.isOpen(open[0]!)).toBe(false);
  });

  describe('one ack frame per turn', () => {
    it('sends nothing before the turn ends, then the whole burst as one multiple ack up to the highest tag', () => {
      // Prepare
      const { ledger, channel, open, endTurn } = setUp(4);
      // Act: acked out of tag order
      for (const i of [2, 0, 3, 1]) ledger.ack(open[i]!, 'acked');
      const sentBefore = channel.acks.length;
      endTurn();
      // Assess
      expect(sentBefore).toBe(0);
      expect(channel.acks).toEqual([open[3]]);
      expect(channel.multiples).toEqual([{ kind: 'ack', tag: 4 }]);
    });

    it('never lets a multiple ack reach a delivery still open: acks above it go one by one', () => {
      // Prepare: tag 3 is still in a handler's hands
      const { ledger, channel, open, endTurn } = setUp(5);
      // Act
      for (const i of [0, 1, 3, 4]) ledger.ack(open[i]!, 'acked');
      endTurn();
      // Assess
      expect(channel.multiples).toEqual([{ kind: 'ack', tag: 2 }]);
      expect(channel.acks).toEqual([open[3], open[4], open[1]]);
      expect(ledger.isOpen(open[2]!)).toBe(true);
    });

    it('lets a multiple ack pass over a delivery requeued earlier (the nack went at once)', () => {
      // Prepare
      const { ledger, channel, open, endTurn } = setUp(3);
      // Act
      ledger.ack(open[0]!, 'acked');
      ledger.requeue(open[1]!);
      ledger.ack(open[2]!, 'acked');
      endTurn();
      // Assess
      expect(channel.nacks.map((n) => n.message)).toEqual([open[1]]);
      expect(channel.multiples).toEqual([{ kind: 'ack', tag: 3 }]);
    });

    it('schedules one send per turn, however many acks it holds', () => {
      // Prepare
      const channel = new FakeChannel();
      let turns = 0;
      const ledger = new DeliveryLedger(channel.asChannel(), new Tally(), (send) => {
        turns++;
        send();
      });
      // Act
      const open = Array.from({ length: 3 }, (_, i) => fakeDelivery({ deliveryTag: i + 1 }));
      for (const d of open) ledger.received(d);
      for (const d of open) ledger.ack(d, 'acked');
      // Assess: a scheduler that runs at once sends each ack as it comes
      expect(turns).toBe(3);
      expect(channel.acks).toEqual(open);
    });

    it('hold sends the acks of the current turn first, before the consumer is cancelled', () => {
      // Prepare
      const { ledger, channel, open, endTurn } = setUp(3);
      ledger.ack(open[0]!, 'acked');
      ledger.ack(open[1]!, 'acked');
      // Act
      ledger.hold();
      ledger.ack(open[2]!, 'acked');
      endTurn();
      // Assess: the turn's end sends nothing more while holding
      expect(channel.multiples).toEqual([{ kind: 'ack', tag: 2 }]);
      expect(channel.acks).toEqual([open[1]]);
    });
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

    it('sends at the end of the turn again after a flush, and a flush with nothing held sends nothing', () => {
      // Prepare
      const { ledger, channel, open, endTurn } = setUp(2);
      ledger.hold();
      ledger.flush();
      // Act
      ledger.ack(open[0]!, 'acked');
      endTurn();
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
