/**
 * The AMQP 1.0 counterpart of `amqp/short-lived-consumer.ts`: one receiving link on the work queue
 * for one invocation, with settlement left to the caller. Credit works like a prefetch: at most
 * `window` deliveries are unsettled at once. rhea's own `credit_window` tops credit up as messages
 * arrive, not as they are settled, which would let an invocation hold any number: so credit is issued
 * here, by hand, as the caller reports settlements.
 */
import type { Connection, Delivery as RheaDelivery, EventContext, Message, Receiver } from 'rhea';
import { TimedWait } from '../amqp/timed-wait.js';
import { BrokerConnectionError } from '../errors.js';

type Received = { readonly message: Message; readonly delivery: RheaDelivery };

/** Credit is topped up once this share of the window is free: one flow frame per few settlements. */
const TOP_UP_SHARE = 4;

class NativeReceiver {
  private readonly buffer: Received[] = [];
  /** The waiting `take`, if any: one timer for every wait, not one armed and cleared per message. */
  private readonly next = new TimedWait<Received>();
  private unsettled = 0;
  /** Credit granted that no delivery has used yet (counted here: rhea's typings do not expose it). */
  private credit = 0;
  private stopping = false;
  private detached = false;

  private constructor(
    private readonly receiver: Receiver,
    private readonly window: number,
  ) {
    receiver.on('message', (context: EventContext) => {
      this.unsettled++;
      this.credit--;
      const received = { message: context.message as Message, delivery: context.delivery as RheaDelivery };
      if (!this.next.hand(received)) this.buffer.push(received);
    });
    receiver.on('receiver_close', () => {
      this.detached = true;
      this.next.end();
    });
  }

  /**
   * Attaches to `/queues/<queue>` and grants `window` credit. Rejects with a `BrokerConnectionError`
   * naming the queue when the broker refuses the link (the queue does not exist, access refused).
   * @example const receiver = await NativeReceiver.open(connection, 'orders', 100);
   */
  public static async open(connection: Connection, queue: string, window: number): Promise<NativeReceiver> {
    const receiver = await NativeReceiver.attach(connection, queue, window);
    receiver.start();
    return receiver;
  }

  /**
   * Attaches as `open` does, without credit: nothing arrives until `start`. The invocation attaches
   * while it checks the topology and reads the pause marker, and takes nothing unless both allow it.
   * @example
   * const receiver = await NativeReceiver.attach(connection, 'orders', 100);
   * receiver.start(); // or receiver.close(): nothing was taken
   */
  public static attach(connection: Connection, queue: string, window: number): Promise<NativeReceiver> {
    return new Promise((resolve, reject) => {
      const link = connection.open_receiver({
        source: { address: `/queues/${encodeURIComponent(queue)}` },
        autoaccept: false,
        credit_window: 0,
      });
      const refused = (context: EventContext): void => {
        const condition = context.receiver?.error as { condition?: string; description?: string } | undefined;
        reject(
          new BrokerConnectionError(`The broker refused to attach to queue ${queue}: ${condition?.description ?? condition?.condition ?? 'no reason given'}`, {
            reason: 'channel-closed',
          }),
        );
      };
      link.once('receiver_error', refused);
      link.once('receiver_open', () => {
        link.removeListener('receiver_error', refused);
        resolve(new NativeReceiver(link, window));
      });
    });
  }

  /** Grants the window's credit: deliveries start to arrive. */
  public start(): void {
    if (!this.stopping && !this.detached) this.grant(this.window);
  }

  /** Deliveries taken and not yet reported settled. */
  public get outstanding(): number {
    return this.unsettled;
  }

  /** The broker detached the link (the queue was deleted): nothing more will come. */
  public get cancelledByBroker(): boolean {
    return this.detached && !this.stopping;
  }

  /** The next delivery, or `undefined` after `waitMs` with none (or once the link is gone). */
  public take(waitMs: number): Promise<Received | undefined> {
    const next = this.buffer.shift();
    if (next !== undefined || this.detached) return Promise.resolve(next);
    return this.next.wait(waitMs);
  }

  /** The next delivery that arrived already, or undefined: `take` without a promise, when one is buffered. */
  public takeArrived(): Received | undefined {
    return this.buffer.shift();
  }

  /** What arrived and was not taken yet, removed from the buffer. */
  public takeBuffered(): Received[] {
    return this.buffer.splice(0);
  }

  /** The caller settled `count` deliveries: their credit is given back, unless the receiver is stopping. */
  public settled(count = 1): void {
    this.unsettled -= count;
    if (this.stopping || this.detached) return;
    const free = this.window - this.unsettled - this.credit;
    if (free >= Math.max(1, this.window / TOP_UP_SHARE)) this.grant(free);
  }

  /**
   * Asks the broker to use up or drop the credit it holds (drain), and waits for its answer (or
   * `waitMs`): after it nothing more arrives, and what arrived meanwhile is in the buffer.
   */
  public async stop(waitMs = 1000): Promise<void> {
    if (this.stopping || this.detached) return;
    this.stopping = true;
    this.next.end();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, waitMs);
      this.receiver.once('receiver_drained', () => {
        clearTimeout(timer);
        this.credit = 0;
        resolve();
      });
      this.receiver.drain_credit();
    });
  }

  /** Detaches the link; what is still unsettled goes back to the queue with it. */
  public close(): void {
    // The wait's timer may still be armed: it must not keep the process alive.
    this.next.end();
    this.stopping = true;
    if (!this.detached) this.receiver.close();
    this.detached = true;
  }

  private grant(credit: number): void {
    this.credit += credit;
    this.receiver.add_credit(credit);
  }
}

export { NativeReceiver };
export type { Received };
