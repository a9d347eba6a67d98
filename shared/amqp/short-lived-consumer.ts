import type { Channel, ConsumeMessage } from 'amqplib';
import { TimedWait } from './timed-wait.js';

/** Options of {@link ShortLivedConsumer.start}. */
type ConsumerOptions = {
  /** Once it aborts, `take` hands out nothing more. */
  readonly stopOn?: AbortSignal;
  /** Be the queue's only consumer (`basic.consume` exclusive). @default false */
  readonly exclusive?: boolean;
};

/**
 * A consumer that lives for one invocation: `basic.consume` with prefetch = batch size (not
 * `basic.get`, which RabbitMQ recommends against and which pays a round trip per message).
 * Deliveries are buffered; `take` hands them out one at a time, in delivery-tag order.
 */
class ShortLivedConsumer {
  private readonly buffer: ConsumeMessage[] = [];
  /** The waiting `take`, if any: one timer for every wait (see TimedWait). */
  private readonly next = new TimedWait<ConsumeMessage>();
  private consumerTag: string | undefined;
  /** A `narrow` under way: `stop` waits for it, so that no consumer it starts outlives the stop. */
  private narrowing: Promise<void> | undefined;
  /** `stopOn` aborted: hand out nothing more. */
  private aborted = false;
  /** Set when the broker cancelled us (the queue was deleted, say). */
  public cancelledByBroker = false;
  /** Drops the `stopOn` listener: a signal that outlives many consumers (a parking-lot read's turns) must not collect them. */
  private unlisten: () => void = () => undefined;

  private constructor(
    private readonly channel: Channel,
    private readonly queue: string,
    private readonly exclusive: boolean,
  ) {}

  /**
   * Starts consuming `queue`. Once `stopOn` aborts (the connection broke, say), a waiting `take`
   * resolves with undefined and every later one at once: one listener for the whole invocation.
   * With `exclusive`, the broker refuses the consume (ACCESS_REFUSED, 403, closing the channel)
   * while the queue has another consumer, and any later consumer while this one lives.
   */
  public static async start(channel: Channel, queue: string, prefetch: number, options: ConsumerOptions = {}): Promise<ShortLivedConsumer> {
    const { stopOn, exclusive = false } = options;
    const consumer = new ShortLivedConsumer(channel, queue, exclusive);
    const abort = (): void => {
      consumer.aborted = true;
      consumer.next.end();
    };
    if (stopOn?.aborted) abort();
    else if (stopOn !== undefined) {
      stopOn.addEventListener('abort', abort, { once: true });
      consumer.unlisten = () => stopOn.removeEventListener('abort', abort);
    }
    // global=false: per consumer; Amazon MQ's RabbitMQ 4.3 rejects global QoS.
    await channel.prefetch(prefetch, false);
    const ok = await channel.consume(queue, (message) => consumer.onMessage(message), { noAck: false, exclusive });
    consumer.consumerTag = ok.consumerTag;
    return consumer;
  }

  /**
   * The next delivery, or undefined when none came within `timeoutMs`, the consumer ended or
   * `stopOn` aborted.
   */
  public take(timeoutMs: number): Promise<ConsumeMessage | undefined> {
    if (this.aborted) return Promise.resolve(undefined);
    const next = this.buffer.shift();
    if (next || this.cancelledByBroker || this.consumerTag === undefined) return Promise.resolve(next);
    return this.next.wait(timeoutMs);
  }

  /**
   * Takes fewer from now on: cancels the consumer and consumes again with `prefetch` (RabbitMQ applies
   * a new prefetch to new consumers only). What the first consumer brought stays buffered and is
   * handed out first; its acks go on the same channel, which stays open. Not for an exclusive consumer
   * (another could take the queue in between). Once only, and never after `stop`.
   */
  public narrow(prefetch: number): Promise<void> {
    if (this.exclusive || this.narrowing !== undefined || this.consumerTag === undefined || this.cancelledByBroker || this.aborted) return Promise.resolve();
    const tag = this.consumerTag;
    this.narrowing = (async () => {
      await this.channel.cancel(tag);
      await this.channel.prefetch(prefetch, false);
      const ok = await this.channel.consume(this.queue, (message) => this.onMessage(message), { noAck: false });
      this.consumerTag = ok.consumerTag;
    })();
    return this.narrowing;
  }

  /** Cancels the consumer; deliveries already sent arrive before cancel-ok and stay buffered. */
  public async stop(): Promise<void> {
    await this.narrowing?.catch(() => undefined);
    const tag = this.consumerTag;
    this.consumerTag = undefined;
    this.unlisten();
    if (tag !== undefined && !this.cancelledByBroker) await this.channel.cancel(tag);
    this.next.end();
  }

  /** Removes and returns what is buffered and was never handed out. */
  public takeBuffered(): ConsumeMessage[] {
    return this.buffer.splice(0);
  }

  private onMessage(message: ConsumeMessage | null): void {
    if (message === null) {
      this.cancelledByBroker = true;
      this.next.end();
      return;
    }
    if (!this.next.hand(message)) this.buffer.push(message);
  }
}

export { ShortLivedConsumer };
