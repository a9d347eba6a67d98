import type { Channel, ConsumeMessage } from 'amqplib';

/**
 * A consumer that lives for one invocation: `basic.consume` with prefetch = batch size (not
 * `basic.get`, which RabbitMQ recommends against and which pays a round trip per message).
 * Deliveries are buffered; `take` hands them out one at a time.
 */
class ShortLivedConsumer {
  private readonly buffer: ConsumeMessage[] = [];
  private waiter: ((message: ConsumeMessage | undefined) => void) | undefined;
  private consumerTag: string | undefined;
  /** Set when the broker cancelled us (the queue was deleted, say). */
  public cancelledByBroker = false;

  private constructor(private readonly channel: Channel) {}

  public static async start(channel: Channel, queue: string, prefetch: number): Promise<ShortLivedConsumer> {
    const consumer = new ShortLivedConsumer(channel);
    // global=false: per consumer; Amazon MQ's RabbitMQ 4.3 rejects global QoS.
    await channel.prefetch(prefetch, false);
    const ok = await channel.consume(queue, (message) => consumer.onMessage(message), { noAck: false });
    consumer.consumerTag = ok.consumerTag;
    return consumer;
  }

  /** The next delivery, or undefined when none came within `timeoutMs` (or the consumer ended). */
  public take(timeoutMs: number): Promise<ConsumeMessage | undefined> {
    const next = this.buffer.shift();
    if (next || this.cancelledByBroker || this.consumerTag === undefined) return Promise.resolve(next);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        resolve(undefined);
      }, Math.max(0, timeoutMs));
      this.waiter = (message) => {
        clearTimeout(timer);
        this.waiter = undefined;
        resolve(message);
      };
    });
  }

  /** Cancels the consumer; deliveries already sent arrive before cancel-ok and stay buffered. */
  public async stop(): Promise<void> {
    const tag = this.consumerTag;
    this.consumerTag = undefined;
    if (tag !== undefined && !this.cancelledByBroker) await this.channel.cancel(tag);
    this.waiter?.(undefined);
  }

  /** Removes and returns what is buffered and was never handed out. */
  public takeBuffered(): ConsumeMessage[] {
    return this.buffer.splice(0);
  }

  private onMessage(message: ConsumeMessage | null): void {
    if (message === null) {
      this.cancelledByBroker = true;
      this.waiter?.(undefined);
      return;
    }
    if (this.waiter) this.waiter(message);
    else this.buffer.push(message);
  }
}

export { ShortLivedConsumer };
