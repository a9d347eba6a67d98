import type { Channel, ConsumeMessage } from 'amqplib';
import type { Outcome, Summary } from './summary.js';

/**
 * Every delivery of one invocation is settled exactly once (ack, or nack with requeue), and its
 * outcome counted once. A late confirm after a hard stop, or a handler that returns after its
 * message was given back, cannot settle it twice (a second ack of a tag closes the channel).
 */
class DeliveryLedger {
  private readonly open = new Set<ConsumeMessage>();

  public constructor(
    private readonly channel: Channel,
    private readonly summary: Summary,
  ) {}

  public received(delivery: ConsumeMessage): void {
    this.open.add(delivery);
    this.summary.received++;
  }

  /** Deliveries not yet settled: the prefetch window they fill is not open to new deliveries. */
  public get outstanding(): number {
    return this.open.size;
  }

  public isOpen(delivery: ConsumeMessage): boolean {
    return this.open.has(delivery);
  }

  /**
   * Acks and counts the outcome; false if it was already settled. Without an outcome it only acks
   * (ack-then-publish counts once it knows what became of the copy).
   */
  public ack(delivery: ConsumeMessage, outcome?: Exclude<Outcome, 'requeued'>): boolean {
    if (!this.open.delete(delivery)) return false;
    if (outcome) this.summary[outcome]++;
    // On a closed channel the broker has already put it back; the count still says what we did.
    quietly(() => this.channel.ack(delivery));
    return true;
  }

  /** Puts it back on the work queue untouched; false if it was already settled. */
  public requeue(delivery: ConsumeMessage): boolean {
    if (!this.open.delete(delivery)) return false;
    this.summary.requeued++;
    quietly(() => this.channel.nack(delivery, false, true));
    return true;
  }

  /** Counts an outcome of a delivery acked earlier without one. */
  public count(outcome: Exclude<Outcome, 'requeued'>): void {
    this.summary[outcome]++;
  }

  /** Gives back everything still open (the broker would on close; doing it first keeps the counts true). */
  public requeueAll(): number {
    const open = [...this.open];
    for (const delivery of open) this.requeue(delivery);
    return open.length;
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
