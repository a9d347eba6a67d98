/**
 * The pause marker: how a queue's pause (a partner said "slow down") outlives the invocation that
 * heard it, for functions that keep no state. It is a small queue beside the work queue,
 * `<work queue>.pause`, declared by the first invocation's read, holding at most one message whose
 * `expiration` is the pause's length: while the message is there, the queue is paused. The broker drops
 * the message when the pause is over, and the queue itself a day after the last invocation's read. Each
 * mode reads it at the start of an invocation and writes it through the port below
 * (amqp/broker-pause-marker.ts over 0-9-1, native/amqp10-pause-marker.ts over AMQP 1.0); what is here is pure.
 *
 * It is not part of `topology apply`: its arguments are Boomerang's own, the same on every broker, so
 * there is nothing for an operator to choose or verify, and the functions declare it themselves.
 */

/** What a marker says: until when the queue is paused, and why. */
type PauseMark = {
  /** Epoch ms. */
  readonly untilMs: number;
  /** The name of the error that asked for it (`PartnerRateLimitedError`, `RetryableError`...). */
  readonly reason: string;
  /** The function whose invocation heard it. */
  readonly by: string;
};

/** The marker of one work queue, as a mode reads and writes it; tests pass a fake. */
interface PauseMarker {
  /** The marker's queue, for log lines. */
  readonly queue: string;
  /** Declares the marker's queue if need be; until when (epoch ms) it says the queue is paused, or undefined (no message). */
  read(): Promise<number | undefined>;
  /** Declares the marker's queue if need be and puts `mark` in it (confirmed), replacing any earlier one. */
  write(mark: PauseMark): Promise<void>;
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
 * The message that marks `mark` at `nowMs`, or undefined when the pause is already over.
 * @example pauseMarkerMessage({ untilMs: 65_000, reason: 'PartnerRateLimitedError', by: 'orders-pull' }, 5_000)?.ttlMs // 60000
 */
function pauseMarkerMessage(mark: PauseMark, nowMs: number): PauseMarkerMessage | undefined {
  const ttlMs = Math.ceil(mark.untilMs - nowMs);
  if (!(ttlMs > 0)) return undefined;
  const body = {
    pausedUntil: new Date(mark.untilMs).toISOString(),
    untilMs: mark.untilMs,
    reason: mark.reason,
    by: mark.by,
    at: new Date(nowMs).toISOString(),
  };
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

export { PAUSE_MARKER_EXPIRES_MS, pauseMarkerArguments, pauseMarkerMessage, pauseMarkerQueue, pausedUntilOf };
export type { PauseMark, PauseMarker, PauseMarkerMessage };
