import type { ConfirmChannel, GetMessage, Message } from 'amqplib';
import { setTimeout as sleep } from 'node:timers/promises';
import { LonePublisher } from '../amqp/lone-publisher.js';
import type { Copy } from '../message/copy-message.js';
import { isNamedError, type PublishError } from '../errors.js';
import { lockReader } from './reader-lock.js';
import { ParkedCommandError, ParkingLotBusyError } from '../errors.js';

/** What becomes of one parked message. */
type Verdict =
  | { readonly kind: 'keep' }
  | { readonly kind: 'move'; readonly queue: string; readonly copy: Copy }
  | { readonly kind: 'delete' };

/** What a walk did so far; the counts of the walk's report. */
type WalkCounts = {
  /** Messages in the queue when the walk started: it visits exactly these. */
  readonly total: number;
  visited: number;
  /** Left in the parking lot, untouched (including moves that could not be sent). */
  kept: number;
  moved: number;
  deleted: number;
  /** Moves the broker returned as unroutable (no such queue), or that could not be sent at all: kept parked instead. */
  notMoved: number;
};

/** `done`: all visited; `early`: stopped on request; `aborted`: Ctrl-C; `queue-shrank`: fewer came than counted. */
type WalkEnding = 'done' | 'early' | 'aborted' | 'queue-shrank';

/** Options of {@link walkParkingLot}. */
type WalkOptions = {
  /** The parking queue. */
  readonly queue: string;
  /** Decides each message's fate, called one message at a time, in queue order. */
  readonly visit: (message: Message) => Verdict | Promise<Verdict>;
  /**
   * Asked after each message: stop here? Honoured only while nothing is held: RabbitMQ 3.x quorum
   * queues put a given-back message at the back, so stopping after a kept one would rotate the queue.
   */
  readonly stopEarly?: () => boolean;
  /** Stops after the message in hand. */
  readonly signal?: AbortSignal;
  readonly onProgress?: (counts: Readonly<WalkCounts>) => void;
  /** A move that stays parked: unroutable (`returned`), or one amqplib cannot send (`rejected-locally`: headers over its 64 KiB buffer). */
  readonly onNotMoved?: (message: Message, queue: string, error: PublishError) => void;
  readonly publishTimeoutMs: number;
};

/**
 * Returns sent before waiting for the broker to apply them. RabbitMQ's quorum-queue client keeps 32
 * commands in flight and stashes the rest in a map, which sends them in another order: 3 000 returns
 * in one burst came back shuffled after the 33rd (3.10.8 and 4.3.6, measured); 32 at a time, each
 * batch waited for, kept all 3 000 in order.
 */
const RETURN_BATCH = 16;
/** How long to wait for one batch of returns to show in the queue's count; past it the walk goes on (the order may suffer, nothing is lost). */
const RETURN_WAIT_MS = 10_000;

/**
 * Walks a parking lot once without changing what it keeps: it counts the messages, takes exactly that
 * many one at a time (`basic.get`, unacked), and gives each a verdict. A deleted one is acked; a moved
 * one is published to its queue (mandatory, confirmed, nothing added to it), then acked; one that
 * cannot be sent stays parked. Every kept message is held unacked and given back (`basic.nack` with
 * requeue) in its order when the walk ends, so it stays byte for byte as it was: nothing is
 * re-published. Where it goes back (measured): to its place on classic queues and RabbitMQ 4.3 quorum
 * queues; to the back on 3.x quorum queues, which after a whole walk is the same order, behind any
 * message parked meanwhile. What a give-back changes is the broker's count, not the message: the
 * `redelivered` flag, and on quorum queues `x-delivery-count` (3.x, 4.0-4.2) or `x-acquired-count`
 * (4.3) rise by one.
 *
 * One at a time, because holding every kept message needs no consumer credit (a quorum queue stops a
 * consumer at 2 000 unacked even with an unlimited prefetch, measured), and only the message in hand
 * is in memory. A crash, or a lost connection, gives back what the walk held: nothing is lost.
 */
async function walkParkingLot(channel: ConfirmChannel, options: WalkOptions): Promise<WalkCounts & { ending: WalkEnding }> {
  // Locked before counting: a reader that counted while another walked would see the other's held messages missing.
  const lock = await lockReader(channel, options.queue);
  try {
    return await walkLocked(channel, options);
  } finally {
    await lock.release().catch(() => undefined);
  }
}

/** The walk itself, by the lot's only reader. */
async function walkLocked(channel: ConfirmChannel, options: WalkOptions): Promise<WalkCounts & { ending: WalkEnding }> {
  const { messageCount: total, consumerCount } = await channel.checkQueue(options.queue);
  if (consumerCount > 0) throw new ParkingLotBusyError(options.queue, consumerCount);
  const counts: WalkCounts = { total, visited: 0, kept: 0, moved: 0, deleted: 0, notMoved: 0 };
  if (total === 0) return { ...counts, ending: 'done' };
  const publisher = new LonePublisher(channel, options.publishTimeoutMs);
  // Only the delivery tags of what is given back at the end: 8 bytes a message, whatever its size.
  const held: number[] = [];
  const hold = (message: Message): void => {
    counts.kept++;
    held.push(message.fields.deliveryTag);
  };
  const moved = async (message: Message, verdict: Extract<Verdict, { kind: 'move' }>): Promise<boolean> => {
    try {
      await publisher.publish(verdict.queue, verdict.copy.content, verdict.copy.options);
      return true;
    } catch (error) {
      if (!(isNamedError<PublishError>(error, 'PublishError') && (error.reason === 'returned' || error.reason === 'rejected-locally'))) throw error;
      counts.notMoved++;
      options.onNotMoved?.(message, verdict.queue, error);
      return false;
    }
  };
  let ending: WalkEnding = 'done';
  try {
    while (counts.visited < total) {
      if (options.signal?.aborted) { ending = 'aborted'; break; }
      const message = await nextMessage(channel, options.queue, counts);
      if (message === false) { ending = 'queue-shrank'; break; }
      counts.visited++;
      const verdict = await options.visit(message);
      if (verdict.kind === 'delete') {
        channel.ack(message);
        counts.deleted++;
      } else if (verdict.kind === 'move' && (await moved(message, verdict))) {
        channel.ack(message);
        counts.moved++;
      } else hold(message);
      options.onProgress?.(counts);
      if (counts.visited < total && held.length === 0 && (options.stopEarly?.() ?? false)) { ending = 'early'; break; }
    }
  } finally {
    // After a failure the channel may be gone: then the broker gives back what it held when it closes.
    await giveBack(channel, options.queue, held).catch(() => undefined);
  }
  return { ...counts, ending };
}

/** The next parked message, unacked; `false` when the queue is empty. A closed channel is a `ParkedCommandError`. */
async function nextMessage(channel: ConfirmChannel, queue: string, counts: Readonly<WalkCounts>): Promise<GetMessage | false> {
  try {
    return await channel.get(queue, { noAck: false });
  } catch (error) {
    throw new ParkedCommandError(`the channel closed after ${counts.visited} of ${counts.total} (${(error as Error).message}); every message not yet moved or deleted stays parked`, { cause: error });
  }
}

/** What `nack` reads of a message: its delivery tag (amqplib takes a whole message for it). */
function byTag(deliveryTag: number): Message {
  return { fields: { deliveryTag } as Message['fields'], properties: {} as Message['properties'], content: EMPTY };
}

const EMPTY = Buffer.alloc(0);

/**
 * Gives the held messages back, in their order, a batch at a time, each batch waited for until the
 * queue's ready count shows it (see {@link RETURN_BATCH}). A message parked meanwhile also raises the
 * count, and can end a wait early: then at most the next batch may land out of order.
 */
async function giveBack(channel: ConfirmChannel, queue: string, held: readonly number[]): Promise<void> {
  if (held.length === 0) return;
  let expected = (await channel.checkQueue(queue)).messageCount;
  for (let start = 0; start < held.length; start += RETURN_BATCH) {
    const batch = held.slice(start, start + RETURN_BATCH);
    for (const tag of batch) channel.nack(byTag(tag), false, true);
    expected += batch.length;
    const deadline = Date.now() + RETURN_WAIT_MS;
    while ((await channel.checkQueue(queue)).messageCount < expected && Date.now() < deadline) await sleep(1);
  }
}

export { walkParkingLot };
export type { Verdict, WalkCounts, WalkEnding, WalkOptions };
