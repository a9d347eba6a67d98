import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { ConfirmPublisher } from '../amqp/confirm-publisher.js';
import { ShortLivedConsumer } from '../amqp/short-lived-consumer.js';
import type { Copy } from '../message/copy-message.js';
import { isNamedError, type PublishError } from '../errors.js';
import { keepCopy } from './copies.js';
import { lockReader, refusedAsBusy } from './reader-lock.js';
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
  /** Republished to the tail of the parking lot (including moves that could not be routed). */
  kept: number;
  moved: number;
  deleted: number;
  /** Moves the broker returned as unroutable (no such queue): kept parked instead. */
  notMoved: number;
};

/** `done`: all visited; `early`: stopped on request with nothing kept (order intact); `aborted`: Ctrl-C; `queue-shrank`: fewer came than counted. */
type WalkEnding = 'done' | 'early' | 'aborted' | 'queue-shrank';

/** Options of {@link walkParkingLot}. */
type WalkOptions = {
  /** The parking queue. */
  readonly queue: string;
  /**
   * Messages in flight at once (the prefetch). With 1, each message is settled before the next is
   * delivered, so a crash duplicates at most one message. @default 1
   */
  readonly window?: number;
  /** Decides each message's fate, called one message at a time, in queue order. */
  readonly visit: (message: ConsumeMessage) => Verdict | Promise<Verdict>;
  /** Asked after each message (window 1 only): stop here? Honoured only while nothing was kept, so the order stays intact. */
  readonly stopEarly?: () => boolean;
  /** Stops after the message in hand; the messages already kept then sit behind the rest (nothing is lost). */
  readonly signal?: AbortSignal;
  readonly onProgress?: (counts: Readonly<WalkCounts>) => void;
  readonly onNotMoved?: (message: ConsumeMessage, queue: string, error: PublishError) => void;
  readonly publishTimeoutMs: number;
  /** How long to wait for a delivery before deciding the queue holds fewer messages than counted. @default 5000 */
  readonly idleTimeoutMs?: number;
};

/**
 * Walks a parking lot once, without losing or reordering anything: it counts the messages, consumes
 * exactly that many, and gives each a verdict. A kept message is republished to the tail with a
 * confirm, then acked; after a full walk the kept messages are back in their order (behind any that
 * arrived meanwhile). A moved one is published to its queue (mandatory, confirmed), then acked; one
 * the broker cannot route stays parked. Nothing is ever requeued: a requeue would count towards a
 * quorum queue's delivery limit (RabbitMQ 4.x drops the message after 20 without a dead-letter
 * exchange) and, on quorum queues, put the message at the back.
 *
 * Close the channel (`await channel.close()`) before the connection: its close-ok proves the broker
 * processed the last acks, while closing the connection at once ended the channel before it had
 * (measured: every held ack lost, every one of those messages parked twice).
 */
async function walkParkingLot(channel: ConfirmChannel, options: WalkOptions): Promise<WalkCounts & { ending: WalkEnding }> {
  // Locked before counting: a reader that counted while another walked would count its copies twice.
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
  const window = Math.min(options.window ?? 1, total);
  const publisher = new ConfirmPublisher(channel, options.publishTimeoutMs);
  const consumer = await refusedAsBusy(options.queue, () => ShortLivedConsumer.start(channel, options.queue, window, { exclusive: true }));
  let channelClosed = false;
  channel.once('close', () => { channelClosed = true; });
  // Not a race with one long-lived "closed" promise: each race would leave a reaction on it that
  // keeps its delivery alive, and a walk of 100 000 messages would hold them all.
  const takeOrClosed = (timeoutMs: number): Promise<ConsumeMessage | undefined> => new Promise((resolve) => {
    const onClose = (): void => resolve(undefined);
    channel.once('close', onClose);
    void consumer.take(timeoutMs).then((message) => {
      channel.off('close', onClose);
      resolve(message);
    });
  });
  const held: ConsumeMessage[] = [];
  const inFlight = new Set<Promise<void>>();
  let acked = 0;
  let stopping = false;
  let failure: unknown;
  // An ack lets the broker deliver one more. The last `window` acks wait until the consumer is
  // cancelled, so the walk never receives a message past those it counted (its own copies at the tail).
  const settle = (message: ConsumeMessage): void => {
    // Decided before the ack, which would let the next message in; stopping after a kept one would reorder.
    if (window === 1 && !stopping) stopping = counts.visited < total && counts.kept === 0 && (options.stopEarly?.() ?? false);
    if (!stopping && acked < total - window) {
      channel.ack(message);
      acked++;
    } else held.push(message);
    options.onProgress?.(counts);
  };
  const publish = (queue: string, copy: Copy): Promise<void> => publisher.publish('', queue, copy.content, copy.options);
  const carryOut = async (message: ConsumeMessage, verdict: Verdict): Promise<void> => {
    if (verdict.kind === 'delete') {
      counts.deleted++;
    } else if (verdict.kind === 'keep' || !(await moved(message, verdict))) {
      counts.kept++;
      await publish(options.queue, keepCopy(message));
    }
    settle(message);
  };
  const moved = async (message: ConsumeMessage, verdict: Extract<Verdict, { kind: 'move' }>): Promise<boolean> => {
    try {
      await publish(verdict.queue, verdict.copy);
      counts.moved++;
      return true;
    } catch (error) {
      if (!(isNamedError<PublishError>(error, 'PublishError') && error.reason === 'returned')) throw error;
      counts.notMoved++;
      options.onNotMoved?.(message, verdict.queue, error);
      return false;
    }
  };
  let ending: WalkEnding = 'done';
  try {
    while (counts.visited < total && failure === undefined) {
      if (options.signal?.aborted) { ending = 'aborted'; break; }
      const message = channelClosed ? undefined : await takeOrClosed(options.idleTimeoutMs ?? 5000);
      if (message === undefined) {
        if (channelClosed) throw new ParkedCommandError(`the channel closed after ${counts.visited} of ${total}; messages not yet acked stay parked`);
        if (consumer.cancelledByBroker) throw new ParkedCommandError(`the broker cancelled the read of ${options.queue}: was the queue deleted?`);
        ending = 'queue-shrank';
        break;
      }
      counts.visited++;
      const verdict = await options.visit(message);
      const work = carryOut(message, verdict).catch((error: unknown) => { failure ??= error; });
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
      if (window === 1) await work;
      if (stopping) { ending = 'early'; break; }
    }
  } finally {
    stopping = true;
    await consumer.stop().catch(() => undefined);
    await Promise.allSettled([...inFlight]);
    // Delivered but never visited (stopped with a window > 1): to the tail, like any kept message.
    for (const message of consumer.takeBuffered()) {
      if (failure === undefined) await carryOut(message, { kind: 'keep' }).catch((error: unknown) => { failure ??= error; });
    }
    ackHeld(channel, held, failure === undefined);
  }
  if (failure !== undefined) throw failure;
  return { ...counts, ending };
}

/**
 * Acks the originals whose copies were confirmed, after the consumer was cancelled. With nothing
 * unconfirmed, one `multiple` ack covers them all (every earlier delivery is settled): RabbitMQ's
 * quorum-queue client stashes settlements beyond 32 in flight and drops the stash when the channel
 * closes, so a burst of single acks right before the close comes back as duplicates (measured on
 * 3.10.8: 18-31 of the last 64). Unconfirmed ones stay unacked: the broker keeps them.
 */
function ackHeld(channel: ConfirmChannel, held: readonly ConsumeMessage[], allConfirmed: boolean): void {
  if (held.length === 0) return;
  if (!allConfirmed) {
    for (const message of held) channel.ack(message);
    return;
  }
  const last = held.reduce((a, b) => (b.fields.deliveryTag > a.fields.deliveryTag ? b : a));
  channel.ack(last, true);
}

export { walkParkingLot };
export type { Verdict, WalkCounts, WalkEnding, WalkOptions };
