import type { Channel } from 'amqplib';
import { ParkingLotBusyError } from '../errors.js';

/** How long an unused lock queue outlives its last reader before the broker deletes it. */
const LOCK_EXPIRES_MS = 10_000;

/** The lock queue of a parking lot: consumed exclusively by the one reader of the lot. */
function readerLockQueue(queue: string): string {
  return `${queue}.reader-lock`;
}

/**
 * Makes this channel the parking lot's only reader, or throws `ParkingLotBusyError`. The consumer
 * count a reader checks first is only a hint: two readers starting together both saw 0, and each
 * read part of the lot (and put it back at the tail, where the other read it again). An exclusive
 * consume is the broker's own lock: it refuses a second one with ACCESS_REFUSED (403), which closes
 * that channel. A classic queue honours it on the lot itself, but a quorum queue ignores it (3.10.8
 * and 4.3.6, measured), so the lock is an exclusive consumer on a small classic queue beside the lot,
 * held until the channel closes or `release` is called.
 */
async function lockReader(channel: Channel, queue: string): Promise<{ release: () => Promise<void> }> {
  const lock = readerLockQueue(queue);
  await channel.assertQueue(lock, {
    durable: false,
    arguments: {
      // classic: the only type that honours an exclusive consumer
      'x-queue-type': 'classic',
      // gone a while after its last reader, not at once: auto-delete could drop it under a reader declaring it
      'x-expires': LOCK_EXPIRES_MS,
    },
  });
  const { consumerTag } = await refusedAsBusy(queue, () => channel.consume(lock, () => undefined, { exclusive: true }));
  return { release: async () => void (await channel.cancel(consumerTag)) };
}

/** Runs a consume; the broker's ACCESS_REFUSED (another exclusive reader) becomes `ParkingLotBusyError`. */
async function refusedAsBusy<T>(queue: string, consume: () => Promise<T>): Promise<T> {
  try {
    return await consume();
  } catch (error) {
    if ((error as { code?: unknown } | undefined)?.code === 403) throw new ParkingLotBusyError(queue, undefined, { cause: error });
    throw error;
  }
}

export { lockReader, readerLockQueue };
