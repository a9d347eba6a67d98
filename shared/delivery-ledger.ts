import type { Channel, ConsumeMessage } from 'amqplib';
import type { Outcome, Summary } from './summary.js';

/**
 * Every delivery of one invocation is settled exactly once (ack, or nack with requeue), and its
 * outcome counted once. A late confirm after a hard stop, or a handler that returns after its
 * message was given back, cannot settle it twice (a second ack of a tag closes the channel).
 */
class DeliveryLedger {
  private readonly open = new Set<ConsumeMessage>();
  /** Acked but not yet sent, in `hold` mode. */
  private held: ConsumeMessage[] | undefined;

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
    if (this.held) this.held.push(delivery);
    // On a closed channel the broker has already put it back; the count still says what we did.
    else quietly(() => this.channel.ack(delivery));
    return true;
  }

  /** Puts it back on the work queue untouched; false if it was already settled. */
  public requeue(delivery: ConsumeMessage): boolean {
    if (!this.open.delete(delivery)) return false;
    this.summary.requeued++;
    quietly(() => this.channel.nack(delivery, false, true));
    return true;
  }

  /**
   * From now on acks are counted at once but sent by `flush()`. Call it when the consumer is
   * cancelled: its cancel-ok covers the acks sent before, and the ones after go out as one `multiple`
   * ack. RabbitMQ's quorum-queue client stashes settlements beyond 32 in flight and drops the stash
   * when the channel closes: a burst of single acks just before the close came back as duplicates
   * (measured on 3.10.8: 3 to 17 of 198 deferred messages). Requeues still go at once: a lost one
   * only means the broker gives the message back at the close, which it does anyway. With
   * ACK_ORDER=ack-then-publish, a held ack goes out after its copy: a crash in that moment duplicates.
   */
  public hold(): void {
    this.held ??= [];
  }

  /**
   * Sends what `hold` kept as one `multiple` ack up to the highest tag. Call it once nothing is open
   * (after `requeueAll`): a `multiple` ack settles every delivery up to its tag still outstanding.
   */
  public flush(): void {
    const held = this.held ?? [];
    this.held = undefined;
    if (held.length === 0) return;
    const last = held.reduce((a, b) => (b.fields.deliveryTag > a.fields.deliveryTag ? b : a));
    quietly(() => this.channel.ack(last, true));
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
