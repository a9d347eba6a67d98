import type { Channel, ChannelModel } from 'amqplib';
import { type PauseMark, type PauseMarker, pauseMarkerArguments, pauseMarkerMessage, pauseMarkerQueue, pausedUntilOf } from './pause-marker.js';
import { ShortLivedConsumer } from './short-lived-consumer.js';

/**
 * How long a read waits for the marker's message after the queue counted one (or a reader): it comes
 * at once, or once another invocation's read gives it back, unless it expired in between (then nothing
 * comes, and the queue is not paused).
 */
const READ_WAIT_MS = 500;

/**
 * The pause marker of `workQueue` (amqp/pause-marker.ts) over AMQP 0-9-1, on `connection`. Each call
 * runs on a channel of its own, closed after it: a missing queue closes the channel it is asked on.
 *
 * A read declares the queue (always the same arguments, so the declare finds it as it is, or makes it
 * empty) and reads its counts from the answer: 2 round trips with the channel's opening, what an
 * invocation pays when no pause holds, beside its own channel's opening. A passive declare would make
 * no queue, but the broker logs each one that meets no queue as an error, once per invocation of a
 * queue that never paused; the declare also renews the queue's `x-expires` while the functions run.
 * Only when the queue holds a message does the read take it, with a consumer of prefetch 1 (2 more),
 * and the channel's close (1 more) gives it back untouched.
 * A write declares the queue (always the same arguments) and publishes the marker with a confirm.
 * @example
 * const marker = brokerPauseMarker(broker.connection, 'orders');
 * const untilMs = await marker.read(); // undefined: not paused
 */
function brokerPauseMarker(connection: ChannelModel, workQueue: string): PauseMarker {
  const queue = pauseMarkerQueue(workQueue);
  return {
    queue,
    read: () =>
      onChannel(connection.createChannel(), async (channel) => {
        // A marker another invocation is reading right now is unacked, so not counted; its reader is.
        const { messageCount, consumerCount } = await channel.assertQueue(queue, { durable: true, arguments: pauseMarkerArguments() });
        if (messageCount === 0 && consumerCount === 0) return undefined;
        const consumer = await ShortLivedConsumer.start(channel, queue, 1);
        const message = await consumer.take(READ_WAIT_MS);
        // The close cancels the consumer and gives the marker back (for the next reader) before the read ends.
        await channel.close().catch(() => undefined);
        return message === undefined ? undefined : pausedUntilOf(message.content, Date.now());
      }),
    write: (mark: PauseMark) =>
      onChannel(connection.createConfirmChannel(), async (channel) => {
        const message = pauseMarkerMessage(mark, Date.now());
        if (message === undefined) return;
        await channel.assertQueue(queue, { durable: true, arguments: pauseMarkerArguments() });
        channel.sendToQueue(queue, message.content, { persistent: true, expiration: String(message.ttlMs), contentType: 'application/json', appId: mark.by });
        await channel.waitForConfirms();
      }),
  };
}

/** Runs `use` on the channel `opening` opens; its close, not awaited, gives back what it holds. */
async function onChannel<C extends Channel, T>(opening: Promise<C>, use: (channel: C) => Promise<T>): Promise<T> {
  const channel = await opening;
  // A refusal (403, 406) closes the channel and rejects the call that met it: the event is not news.
  channel.on('error', () => undefined);
  try {
    return await use(channel);
  } finally {
    void channel.close().catch(() => undefined);
  }
}

export { brokerPauseMarker };
