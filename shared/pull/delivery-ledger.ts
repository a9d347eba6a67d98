import type { Channel, ConsumeMessage } from 'amqplib';
import type { Outcome } from '../observability/summary.js';
import type { Tally } from '../core/tally.js';
import { SequenceWindow } from '../sequence-window.js';

/** Runs `send` soon, after the work of the current event-loop turn (tests pass their own). */
type Scheduler = (send: () => void) => void;

const nextTurn: Scheduler = (send) => {
  setImmediate(send);
};

/**
 * Every delivery of one invocation is settled exactly once (ack, or nack with requeue), and its
 * outcome counted once. A late confirm after a hard stop, or a handler that returns after its
 * message was given back, cannot settle it twice (a second ack of a tag closes the channel).
 *
 * Acks are counted at once but sent once per event-loop turn: every ack below the lowest delivery
 * still open goes out as one `multiple` ack, the rest one by one. One frame (and one socket write)
 * for a whole burst, instead of one per message, is the largest single saving in the pull loop.
 * A crash in that turn can only duplicate what was acked in it (the broker redelivers), never lose it.
 */
class DeliveryLedger {
  /** By delivery tag: a channel numbers its deliveries 1, 2, 3..., and they arrive in that order. */
  private readonly open = new SequenceWindow<ConsumeMessage>();
  /** Acked and counted, not yet sent. */
  private unsent: ConsumeMessage[] = [];
  private sendScheduled = false;
  /** In `hold` mode, acks wait for `flush()`. */
  private holding = false;

  public constructor(
    private readonly channel: Channel,
    private readonly tally: Tally,
    private readonly schedule: Scheduler = nextTurn,
  ) {}

  public received(delivery: ConsumeMessage): void {
    this.open.add(delivery.fields.deliveryTag, delivery);
    this.tally.receive();
  }

  /** Deliveries not yet settled: the prefetch window they fill is not open to new deliveries. */
  public get outstanding(): number {
    return this.open.size;
  }

  public isOpen(delivery: ConsumeMessage): boolean {
    return this.open.get(delivery.fields.deliveryTag) === delivery;
  }

  /** Acks (sent with this turn's others) and counts the outcome; false if it was already settled. */
  public ack(delivery: ConsumeMessage, outcome: Exclude<Outcome, 'requeued'>): boolean {
    if (!this.close(delivery)) return false;
    this.tally.settle(outcome, delivery);
    this.unsent.push(delivery);
    if (!this.holding && !this.sendScheduled) {
      this.sendScheduled = true;
      this.schedule(() => {
        this.sendScheduled = false;
        if (!this.holding) this.sendAcks();
      });
    }
    return true;
  }

  /**
   * Acks now, without counting an outcome; false if it was already settled. For ack-then-publish,
   * whose promise (never a second copy) needs the ack on the wire before the copy is published.
   * In `hold` mode it waits for `flush()` like any other ack.
   */
  public ackAtOnce(delivery: ConsumeMessage): boolean {
    if (!this.close(delivery)) return false;
    if (this.holding) this.unsent.push(delivery);
    else quietly(() => this.channel.ack(delivery));
    return true;
  }

  /**
   * Puts it back on the work queue untouched; false if it was already settled. Sent at once: a
   * later `multiple` ack must find it settled already, never cover it. `failure`: why its verdict
   * could not be carried out (the copy was not confirmed), for its span.
   */
  public requeue(delivery: ConsumeMessage, failure?: string): boolean {
    return this.nackNow(delivery, true, failure);
  }

  /**
   * Sends the acks of this turn now, and from then on keeps acks for `flush()`. Call it when the
   * consumer is cancelled: its cancel-ok covers the acks sent before, and the ones after go out as
   * one `multiple` ack. RabbitMQ's quorum-queue client stashes settlements beyond 32 in flight and
   * drops the stash when the channel closes: a burst of single acks just before the close came back
   * as duplicates (measured on 3.10.8: 3 to 17 of 198 deferred messages). Requeues still go at once: a
   * lost one only means the broker gives the message back at the close, which it does anyway. With
   * ACK_ORDER=ack-then-publish, a held ack goes out after its copy: a crash in that moment duplicates.
   */
  public hold(): void {
    this.sendAcks();
    this.holding = true;
  }

  /**
   * Sends every ack not yet sent (after `hold`, as one `multiple` ack up to the highest tag once
   * nothing is open: call it after `requeueAll`) and ends `hold` mode.
   */
  public flush(): void {
    this.holding = false;
    this.sendAcks();
  }

  /** Counts an outcome of a delivery acked earlier without one (`failure`: a loss, said on its span). */
  public count(delivery: ConsumeMessage, outcome: Exclude<Outcome, 'requeued'>, failure?: string): void {
    this.tally.settle(outcome, delivery, failure);
  }

  /**
   * Rejects it without requeue, so that the work queue's dead-letter target (its parking lot) takes
   * it as it is, and counts it as `parked`; false if it was already settled. Sent at once, as a requeue.
   */
  public reject(delivery: ConsumeMessage): boolean {
    return this.nackNow(delivery, false);
  }

  /** Takes it out of the open ones; false when it was not open (settled already). */
  private close(delivery: ConsumeMessage): boolean {
    return this.isOpen(delivery) && this.open.remove(delivery.fields.deliveryTag) !== undefined;
  }

  /** A nack sent at once, counted as `requeued` or (dead-lettered to the parking lot) `parked`. */
  private nackNow(delivery: ConsumeMessage, requeue: boolean, failure?: string): boolean {
    if (!this.close(delivery)) return false;
    this.tally.settle(requeue ? 'requeued' : 'parked', delivery, failure);
    quietly(() => this.channel.nack(delivery, false, requeue));
    return true;
  }

  /** Gives back everything still open (the broker would on close; doing it first keeps the counts true). */
  public requeueAll(): number {
    const open = this.open.openEntries();
    for (const [, delivery] of open) this.requeue(delivery);
    return open.length;
  }

  /**
   * A `multiple` ack settles every delivery up to its tag that is still outstanding on the channel,
   * so it may only reach below the lowest tag still open here. Deliveries arrive and are handed out in
   * tag order, so one not yet received always has a higher tag than any acked.
   */
  private sendAcks(): void {
    const unsent = this.unsent;
    if (unsent.length === 0) return;
    this.unsent = [];
    const lowestOpen = this.open.lowest ?? Number.POSITIVE_INFINITY;
    let top: ConsumeMessage | undefined;
    let covered = 0;
    for (const delivery of unsent) {
      if (delivery.fields.deliveryTag < lowestOpen) {
        covered++;
        if (top === undefined || delivery.fields.deliveryTag > top.fields.deliveryTag) top = delivery;
      } else {
        // Above a delivery still in a handler's hands: on its own, or its prefetch slot stays shut.
        quietly(() => this.channel.ack(delivery));
      }
    }
    // On a closed channel the broker has already put them back; the counts still say what we did.
    if (top !== undefined) quietly(() => this.channel.ack(top, covered > 1));
  }
}

function quietly(op: () => void): void {
  try {
    op();
  } catch {
    // amqplib throws IllegalOperationError on a closed channel; nothing more to do here.
  }
}

export { DeliveryLedger };
