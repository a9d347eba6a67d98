import type { ConfirmChannel, Message } from 'amqplib';
import { setTimeout as sleep } from 'node:timers/promises';
import { LonePublisher } from '../amqp/lone-publisher.js';
import type { Copy } from '../message/copy-message.js';
import { isNamedError, type PublishError } from '../errors.js';
import { OPTIONS } from '../config/option-table.js';
import { lockReader } from './reader-lock.js';
import { TurnReader } from './turn-reader.js';
import { ParkedCommandError, ParkingLotBusyError } from '../errors.js';

/** What becomes of one parked message. */
type Verdict = { readonly kind: 'keep' } | { readonly kind: 'move'; readonly queue: string; readonly copy: Copy } | { readonly kind: 'delete' };

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
  /** The most messages the read's consumer holds at once (its prefetch): the queue's BATCH_SIZE. @default 100 */
  readonly prefetch?: number;
  /**
   * Every verdict is `keep` (`list`, `groups`, `show`, dry runs, the console's reads): the walk reads in
   * turns of a short-lived consumer. Otherwise it takes one message at a time with `basic.get`, the one
   * way AMQP 0-9-1 has to take exactly the messages it acts on: a consumer would have more in flight
   * when a `--limit` stops it, and a quorum queue puts those at the back (measured). @default false
   */
  readonly readOnly?: boolean;
  /** How long to wait for a delivery before deciding the queue holds fewer messages than counted. @default 5000 */
  readonly idleTimeoutMs?: number;
};

/**
 * About the most bytes of bodies a read holds at once: its prefetch shrinks to fit the largest body
 * seen (a console reading 8 MB messages takes two at a time, not 100).
 */
const READ_BUDGET_BYTES = 16 * 1024 * 1024;

/**
 * Returns sent before waiting for the broker to apply them. RabbitMQ's quorum-queue client keeps 32
 * commands in flight and stashes the rest in a map, which sends them in another order: 3 000 returns
 * in one burst came back shuffled after the 33rd (3.10.8 and 4.3.6, measured); 32 at a time, each
 * batch waited for, kept all 3 000 in order.
 */
const RETURN_BATCH = 16;
/** How long a consumer count above 0 is looked at again before the lot is called busy. */
const CONSUMER_SETTLE_MS = 1000;

/** How long to wait for one batch of returns to show in the queue's count; past it the walk goes on (the order may suffer, nothing is lost). */
const RETURN_WAIT_MS = 10_000;

/**
 * Walks a parking lot once without changing what it keeps: it counts the messages, consumes exactly
 * that many (unacked, in turns of a short-lived consumer: see `TurnReader`), and gives each a verdict.
 * A deleted one is acked; a moved one is published to its queue (mandatory, confirmed, nothing added
 * to it), then acked; one that cannot be sent stays parked. Every kept message is held unacked and
 * given back (`basic.nack` with requeue) in its order when the walk ends, so it stays byte for byte as
 * it was: nothing is re-published. Where it goes back (measured): to its place on classic queues; to
 * the back on quorum queues (on 4.3 a `basic.get` one goes back to its place), which after a whole
 * walk is the same order, behind any message parked meanwhile. What a give-back changes is the broker's count, not the message: the `redelivered` flag,
 * and on quorum queues `x-delivery-count` (3.x, 4.0-4.2) or `x-acquired-count` (4.3) rise by one.
 *
 * In turns, because a held message keeps its consumer's credit, and one consumer could not hold a
 * whole lot (a quorum queue stops a consumer at 2 000 unacked even with an unlimited prefetch,
 * measured). Memory holds a turn's messages, within `READ_BUDGET_BYTES`, and a delivery tag of each
 * held one. A crash, or a lost connection, gives back what the walk held: nothing is lost.
 */
async function walkParkingLot(channel: ConfirmChannel, options: WalkOptions): Promise<WalkCounts & { ending: WalkEnding }> {
  // A missing lot fails here (404), before the lock queue is declared: it would outlive the read by its x-expires.
  await channel.checkQueue(options.queue);
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
  let { messageCount: total, consumerCount } = await channel.checkQueue(options.queue);
  // A reader that has just closed may still be counted for a moment (a quorum queue removes its
  // consumer through its log: seen between the two walks of a remote replay); look again before
  // calling the lot busy. This walk holds the lock, so no other reader of ours can be starting.
  for (const until = Date.now() + CONSUMER_SETTLE_MS; consumerCount > 0 && Date.now() < until; ) {
    await sleep(25);
    ({ messageCount: total, consumerCount } = await channel.checkQueue(options.queue));
  }
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
  const closed = new AbortController();
  const onClose = (): void => closed.abort();
  channel.once('close', onClose);
  const reader: Reader =
    options.readOnly === true
      ? new TurnReader(channel, options.queue, {
          maxPrefetch: options.prefetch ?? OPTIONS.batchSize.default,
          budgetBytes: READ_BUDGET_BYTES,
          stopOn: closed.signal,
        })
      : new GetReader(channel, options.queue);
  let ending: WalkEnding = 'done';
  try {
    while (counts.visited < total) {
      if (options.signal?.aborted) {
        ending = 'aborted';
        break;
      }
      const message = await reader.next(options.idleTimeoutMs ?? 5000);
      if (message === undefined) {
        if (closed.signal.aborted)
          throw new ParkedCommandError(`the channel closed after ${counts.visited} of ${total}; every message not yet moved or deleted stays parked`);
        if (reader.cancelledByBroker) throw new ParkedCommandError(`the broker cancelled the read of ${options.queue}: was the queue deleted?`);
        ending = 'queue-shrank';
        break;
      }
      counts.visited++;
      const verdict = await options.visit(message);
      if (options.readOnly === true && verdict.kind !== 'keep') throw new Error(`a read-only walk of ${options.queue} was asked to ${verdict.kind} a message`);
      if (verdict.kind === 'delete') {
        channel.ack(message);
        counts.deleted++;
      } else if (verdict.kind === 'move' && (await moved(message, verdict))) {
        channel.ack(message);
        counts.moved++;
      } else hold(message);
      options.onProgress?.(counts);
      if (counts.visited < total && held.length === 0 && (options.stopEarly?.() ?? false)) {
        ending = 'early';
        break;
      }
    }
  } finally {
    channel.off('close', onClose);
    // Delivered but never visited (a turn's buffer when the walk stopped, or messages parked meanwhile): given back too.
    for (const message of await reader.close().catch(() => [])) held.push(message.fields.deliveryTag);
    // After a failure the channel may be gone: then the broker gives back what it held when it closes.
    await giveBack(channel, options.queue, held).catch(() => undefined);
  }
  return { ...counts, ending };
}

/** Where a walk takes its messages from, in queue order. */
type Reader = {
  /** The next message, unacked; undefined when none came in time, or the channel closed. */
  next(timeoutMs: number): Promise<Message | undefined>;
  /** What was delivered but never handed out, to be given back. */
  close(): Promise<Message[]>;
  readonly cancelledByBroker: boolean;
};

/** One `basic.get` at a time: it takes exactly what is asked for, and nothing is ever in flight. */
class GetReader implements Reader {
  public readonly cancelledByBroker = false;

  public constructor(
    private readonly channel: ConfirmChannel,
    private readonly queue: string,
  ) {}

  public async next(): Promise<Message | undefined> {
    // A closed channel rejects; the walk tells that from an empty queue by the channel's close.
    const message = await this.channel.get(this.queue, { noAck: false }).catch(() => false as const);
    return message === false ? undefined : message;
  }

  public close(): Promise<Message[]> {
    return Promise.resolve([]);
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
