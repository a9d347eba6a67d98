import amqp, { type Channel, type ConsumeMessage } from 'amqplib';
import type { RmqEvent } from '../../shared/event/rmq-event.js';
import { rmqEventOf } from './rmq-event-of.js';

/**
 * What the emulated mapping does with a batch after a failed invocation. No source says what the
 * Amazon MQ event source mapping does (see docs/pull-and-event.md), so each plausible way is one:
 * - `nack`: `basic.nack` with requeue, each delivery of the batch;
 * - `reject`: `basic.reject` with requeue, each delivery;
 * - `close-channel`: closes its channel (the broker returns every unacked delivery) and consumes again;
 * - `hold`: keeps the deliveries and invokes the function again with the same batch, no redelivery.
 */
type MappingOnFailure = 'nack' | 'reject' | 'close-channel' | 'hold';

type EventSourceOptions = {
  readonly url: string;
  readonly queue: string;
  /** The mapping's batch size, and its consumer's prefetch. */
  readonly batchSize: number;
  readonly onFailure: MappingOnFailure;
  /** Runs the function with the event; resolves true when it succeeded (the batch is then acked). */
  readonly invoke: (event: RmqEvent) => Promise<boolean>;
  /** The emulator stops after this many invocations, giving the batch it holds back. */
  readonly maxInvocations: number;
  /** How long a batch waits to fill after its first delivery. @default 100 */
  readonly batchWindowMs?: number;
  /** The run ends when no delivery came for this long. @default 1500 */
  readonly idleMs?: number;
};

type EventSourceRun = {
  readonly invocations: number;
  /** Invocations that failed (the child was killed or exited non-zero). */
  readonly failures: number;
  /** Batches acked after a successful invocation. */
  readonly batchesAcked: number;
  readonly stoppedBecause: 'idle' | 'max-invocations';
};

/**
 * An event source mapping for one work queue, emulated with a real consumer: prefetch = batch size,
 * the `aws:rmq` event built from the real deliveries (`redelivered`, `x-delivery-count` and
 * `x-acquired-count` as the broker set them), one invocation at a time (the mapping's concurrency is
 * 1), the batch acked when the invocation succeeds and handled as `onFailure` says when it fails.
 * @example await runEventSource({ url, queue, batchSize: 4, onFailure: 'nack', maxInvocations: 25, invoke })
 */
async function runEventSource(options: EventSourceOptions): Promise<EventSourceRun> {
  const connection = await amqp.connect(options.url);
  connection.on('error', () => undefined);
  const consumer = new BatchConsumer(options.queue, options.batchSize);
  let channel = await consumer.open(connection);
  let invocations = 0;
  let failures = 0;
  let batchesAcked = 0;
  try {
    for (;;) {
      const batch = await consumer.next(options.idleMs ?? 1500, options.batchWindowMs ?? 100);
      if (batch.length === 0) return { invocations, failures, batchesAcked, stoppedBecause: 'idle' };
      const event = rmqEventOf(options.queue, batch);
      let done = false;
      while (!done) {
        if (invocations >= options.maxInvocations) return { invocations, failures, batchesAcked, stoppedBecause: 'max-invocations' };
        invocations++;
        if (await options.invoke(event)) {
          for (const delivery of batch) channel.ack(delivery);
          batchesAcked++;
          done = true;
          continue;
        }
        failures++;
        // `hold` invokes again with the very same event: the loop goes round without a redelivery.
        if (options.onFailure === 'hold') continue;
        done = true;
        if (options.onFailure === 'nack') for (const delivery of batch) channel.nack(delivery, false, true);
        if (options.onFailure === 'reject') for (const delivery of batch) channel.reject(delivery, true);
        if (options.onFailure === 'close-channel') {
          await channel.close();
          channel = await consumer.open(connection);
        }
      }
    }
  } finally {
    // Whatever is still held goes back to the queue with the connection.
    await connection.close().catch(() => undefined);
  }
}

/** One consumer at a time on the queue; deliveries of a closed channel are forgotten (the broker returned them). */
class BatchConsumer {
  private buffer: ConsumeMessage[] = [];
  private arrived: () => void = () => undefined;

  public constructor(
    private readonly queue: string,
    private readonly batchSize: number,
  ) {}

  public async open(connection: amqp.ChannelModel): Promise<Channel> {
    const channel = await connection.createChannel();
    channel.on('error', () => undefined);
    this.buffer = [];
    const buffer = this.buffer;
    await channel.prefetch(this.batchSize);
    await channel.consume(this.queue, (message) => {
      if (message === null) return;
      buffer.push(message);
      this.arrived();
    });
    return channel;
  }

  /** The next batch: waits up to `idleMs` for a first delivery, then up to `windowMs` for a full batch. */
  public async next(idleMs: number, windowMs: number): Promise<ConsumeMessage[]> {
    if (this.buffer.length === 0) await this.until(() => this.buffer.length > 0, idleMs);
    if (this.buffer.length > 0) await this.until(() => this.buffer.length >= this.batchSize, windowMs);
    return this.buffer.splice(0, this.batchSize);
  }

  private async until(ready: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ready() && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now());
        this.arrived = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }
}

export { runEventSource };
export type { MappingOnFailure };
