/**
 * The pause marker: how a queue's pause (a partner said "slow down") outlives the invocation that
 * heard it, for functions that keep no state. It is a small queue beside the work queue,
 * `<work queue>.pause`, declared by the first invocation's read, holding at most one message whose
 * `expiration` is the pause's length: while the message is there, the queue is paused. The broker drops
 * the message when the pause is over, and the queue itself a day after the last invocation's read. Each
 * mode reads it at the start of an invocation and writes it through the port below (core/pause.ts):
 * here its format and its adapter over AMQP 0-9-1 (`amqp091PauseMarker`); native/amqp10-pause-marker.ts
 * is its adapter over AMQP 1.0.
 *
 * It is not part of `topology apply`: its arguments are Boomerang's own, the same on every broker, so
 * there is nothing for an operator to choose or verify, and the functions declare it themselves.
 */
import type { Channel, ChannelModel } from 'amqplib';
import { ShortLivedConsumer } from './short-lived-consumer.js';

/** A pause a handler's answer asked for: until when, and whose answer it was. */
type PauseStart = {
  /** Epoch ms. */
  readonly untilMs: number;
  /** The queue of the message that got the answer (event mode: its record's queue). */
  readonly queue: string;
  /** The name of the error that asked for it (`PartnerRateLimitedError`, `RetryableError`...): the marker's `reason`. */
  readonly errorName: string;
  readonly messageId: string | undefined;
};

/** The marker of one work queue, as a mode reads and writes it; tests pass a fake. */
interface PauseMarker {
  /** The marker's queue, for log lines. */
  readonly queue: string;
  /** Declares the marker's queue if need be; until when (epoch ms) it says the queue is paused, or undefined (no message). */
  read(): Promise<number | undefined>;
  /** Declares the marker's queue if need be and puts the pause in it (confirmed), replacing any earlier one; `by`: the function that heard it. */
  write(pause: PauseStart, by: string): Promise<void>;
}

/** A day: the broker deletes a marker queue no invocation declared for that long. */
const PAUSE_MARKER_EXPIRES_MS = 86_400_000;

/**
 * The marker queue of `workQueue`.
 * @example pauseMarkerQueue('orders') // 'orders.pause'
 */
function pauseMarkerQueue(workQueue: string): string {
  return `${workQueue}.pause`;
}

/**
 * The marker queue's arguments; the same on every declare (a different one would be refused, 406).
 * @example pauseMarkerArguments()['x-max-length'] // 1
 */
function pauseMarkerArguments(): Readonly<Record<string, string | number>> {
  return {
    // One pause at a time: a newer marker replaces the one before, the head is dropped.
    'x-max-length': 1,
    'x-overflow': 'drop-head',
    // Deleted by the broker once unused for a day: a queue that paused once does not keep it forever.
    'x-expires': PAUSE_MARKER_EXPIRES_MS,
    // One message on one node: nothing to replicate (a lost marker only ends a pause early). Durable,
    // since RabbitMQ 4.3 refuses transient queues that are not exclusive.
    'x-queue-type': 'classic',
  };
}

/** A marker message: its body (JSON, readable in the management UI) and how long the broker keeps it. */
type PauseMarkerMessage = { readonly content: Buffer; readonly ttlMs: number };

/**
 * The message that marks `pause` (heard by `by`) at `nowMs`, or undefined when the pause is already over.
 * @example pauseMarkerMessage({ untilMs: 65_000, queue: 'orders', errorName: 'PartnerRateLimitedError', messageId: undefined }, 'orders-pull', 5_000)?.ttlMs // 60000
 */
function pauseMarkerMessage(pause: PauseStart, by: string, nowMs: number): PauseMarkerMessage | undefined {
  const ttlMs = Math.ceil(pause.untilMs - nowMs);
  if (!(ttlMs > 0)) return undefined;
  const body = { pausedUntil: new Date(pause.untilMs).toISOString(), untilMs: pause.untilMs, reason: pause.errorName, by, at: new Date(nowMs).toISOString() };
  return { content: Buffer.from(JSON.stringify(body)), ttlMs };
}

/**
 * Until when a marker message's body says the queue is paused, if still ahead of `nowMs`; a body that
 * is not a marker's counts as no pause (nothing Boomerang wrote can pause a queue by mistake).
 * @example pausedUntilOf(Buffer.from('{"untilMs":65000}'), 5000) // 65000
 */
function pausedUntilOf(content: Buffer, nowMs: number): number | undefined {
  let body: unknown;
  try {
    body = JSON.parse(content.toString('utf8'));
  } catch {
    return undefined;
  }
  const untilMs = (body as { untilMs?: unknown } | null)?.untilMs;
  return typeof untilMs === 'number' && Number.isFinite(untilMs) && untilMs > nowMs ? untilMs : undefined;
}

/**
 * How long a read waits for the marker's message after the queue counted one (or a reader): it comes
 * at once, or once another invocation's read gives it back, unless it expired in between (then nothing
 * comes, and the queue is not paused).
 */
const READ_WAIT_MS = 500;

/**
 * The pause marker of `workQueue` over AMQP 0-9-1, on `connection`. Each call
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
 * const marker = amqp091PauseMarker(broker.connection, 'orders');
 * const untilMs = await marker.read(); // undefined: not paused
 */
function amqp091PauseMarker(connection: ChannelModel, workQueue: string): PauseMarker {
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
    write: (pause: PauseStart, by: string) =>
      onChannel(connection.createConfirmChannel(), async (channel) => {
        const message = pauseMarkerMessage(pause, by, Date.now());
        if (message === undefined) return;
        await channel.assertQueue(queue, { durable: true, arguments: pauseMarkerArguments() });
        channel.sendToQueue(queue, message.content, { persistent: true, expiration: String(message.ttlMs), contentType: 'application/json', appId: by });
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

export { amqp091PauseMarker, pauseMarkerArguments, pauseMarkerMessage, pauseMarkerQueue, pausedUntilOf };
export type { PauseMarker, PauseStart };
