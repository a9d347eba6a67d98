import type { Channel, ConsumeMessage } from 'amqplib';
import { ShortLivedConsumer } from '../amqp/short-lived-consumer.js';

/** Options of {@link TurnReader}. */
type TurnReaderOptions = {
  /** The most a turn's consumer may hold (its prefetch). */
  readonly maxPrefetch: number;
  /** About the most bytes of bodies a turn may hold: the prefetch shrinks to fit the largest body seen. */
  readonly budgetBytes: number;
  /** Once it aborts (the channel closed), `next` hands out nothing more. */
  readonly stopOn: AbortSignal;
};

/**
 * Reads a queue in order, in turns, each by a short-lived consumer, for a reader that settles nothing
 * until it is done (it gives everything back). A held message keeps its consumer's credit, so once a
 * turn handed out its prefetch, the consumer has no credit left and nothing in flight; it is cancelled
 * then, and a new one takes the next turn. A cancelled consumer's unacked messages stay with the
 * channel. (A reader that acks must not use it: an ack frees credit, and a quorum queue returns what
 * was in flight to a cancelled consumer to the back of the queue, measured on 3.10.8.) The first turn
 * takes one message; after it, a turn's prefetch is the budget over the largest body seen, up to
 * `maxPrefetch`, so 1 KB messages go `maxPrefetch` at a time and 8 MB ones two at a time.
 */
class TurnReader {
  private consumer: ShortLivedConsumer | undefined;
  private leftover: ConsumeMessage[] = [];
  private prefetch = 1;
  private handed = 0;
  private largestBytes = 0;
  /** The broker cancelled a turn's consumer (the queue was deleted). */
  public cancelledByBroker = false;

  public constructor(
    private readonly channel: Channel,
    private readonly queue: string,
    private readonly options: TurnReaderOptions,
  ) {}

  /** The next message in queue order, or undefined when none came within `timeoutMs` (or the consumer ended). */
  public async next(timeoutMs: number): Promise<ConsumeMessage | undefined> {
    if (this.options.stopOn.aborted) return undefined;
    if (this.consumer !== undefined && this.handed >= this.prefetch) await this.endTurn();
    const left = this.leftover.shift();
    if (left !== undefined) return this.seen(left);
    if (this.consumer === undefined) {
      this.consumer = await ShortLivedConsumer.start(this.channel, this.queue, this.prefetch, { stopOn: this.options.stopOn });
      this.handed = 0;
    }
    const message = await this.consumer.take(timeoutMs);
    if (message === undefined) {
      this.cancelledByBroker ||= this.consumer.cancelledByBroker;
      return undefined;
    }
    this.handed++;
    return this.seen(message);
  }

  /** Ends the reading: what was delivered but never handed out, to be given back with the rest. */
  public async close(): Promise<ConsumeMessage[]> {
    if (this.consumer !== undefined) await this.endTurn();
    return this.leftover.splice(0);
  }

  private seen(message: ConsumeMessage): ConsumeMessage {
    this.largestBytes = Math.max(this.largestBytes, message.content.length);
    return message;
  }

  private async endTurn(): Promise<void> {
    const consumer = this.consumer as ShortLivedConsumer;
    this.consumer = undefined;
    await consumer.stop();
    this.leftover.push(...consumer.takeBuffered());
    this.prefetch = Math.max(1, Math.min(this.options.maxPrefetch, Math.floor(this.options.budgetBytes / Math.max(1, this.largestBytes))));
  }
}

export { TurnReader };
