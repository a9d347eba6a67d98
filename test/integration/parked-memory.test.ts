import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect, it } from 'vitest';
import { EVERYTHING } from '../../shared/parked/filters.js';
import { listParked } from '../../shared/parked/list.js';
import type { Progress } from '../../shared/parked/progress.js';
import { purgeParked } from '../../shared/parked/purge.js';
import type { WalkCounts } from '../../shared/parked/walk.js';
import { uniqueName } from '../helpers/broker.js';
import { useTestBroker } from '../helpers/topology.js';

const MESSAGES = 5_000;
const BODY_BYTES = 16_384;
/** Well under the 80 MB of bodies the walk reads: holding them would show (16 MB was seen in a loaded full run). */
const MAX_RETAINED_BYTES = 32 * 1024 * 1024;

// A full collection before each sample, so the figure is what the walk holds, not garbage not yet collected.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The JS heap plus Buffers (message bodies live outside the heap). */
function usedBytes(): number {
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

/** A progress report that samples the heap after a full collection every `every` messages. */
class HeapSampler implements Progress {
  public peakBytes = 0;

  public constructor(private readonly every: number) {}

  private sampledAt = 0;

  public update(counts: Readonly<WalkCounts>): void {
    if (counts.visited - this.sampledAt < this.every) return;
    this.sampledAt = counts.visited;
    gc();
    this.peakBytes = Math.max(this.peakBytes, usedBytes());
  }

  public print(): void {}

  public stop(): void {}
}

const broker = useTestBroker();

it(`lists and purges ${MESSAGES} parked messages holding a bounded amount of memory`, async () => {
  // Prepare
  const queue = uniqueName('lot');
  broker().trackQueue(queue);
  const setUp = await broker().connection.createConfirmChannel();
  // A quorum queue, as Boomerang declares parking lots: a classic one takes the broker seconds to
  // take back thousands of held messages (17 s for 20 000 on 3.10.8, measured).
  await setUp.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  const body = Buffer.alloc(BODY_BYTES, 'x');
  for (let i = 0; i < MESSAGES; i++) {
    setUp.sendToQueue(queue, body, { persistent: false, messageId: `m-${i}`, headers: { 'boomerang-error-name': 'PartnerDown' } });
    if (i % 2000 === 1999) await setUp.waitForConfirms();
  }
  await setUp.waitForConfirms();
  await setUp.close();
  const walk = async <T>(
    command: (progress: Progress, channel: Parameters<typeof listParked>[0]['channel']) => Promise<T>,
  ): Promise<{ result: T; retainedBytes: number }> => {
    const channel = await broker().connection.createConfirmChannel();
    gc();
    const before = usedBytes();
    const sampler = new HeapSampler(2000);
    const result = await command(sampler, channel);
    await channel.close();
    return { result, retainedBytes: sampler.peakBytes - before };
  };

  // Act
  const listed = await walk((progress, channel) =>
    listParked({ channel, queue, publishTimeoutMs: 10_000, progress: () => progress }, { filter: EVERYTHING, json: true, limit: 0 }),
  );
  const purged = await walk((progress, channel) =>
    purgeParked({ channel, queue, publishTimeoutMs: 10_000, progress: () => progress }, { filter: EVERYTHING, dryRun: false }),
  );

  // Assess
  expect(listed.result).toMatchObject({ total: MESSAGES, visited: MESSAGES, kept: MESSAGES, matched: MESSAGES });
  expect(purged.result).toMatchObject({ total: MESSAGES, visited: MESSAGES, deleted: MESSAGES });
  expect(listed.retainedBytes).toBeLessThan(MAX_RETAINED_BYTES);
  expect(purged.retainedBytes).toBeLessThan(MAX_RETAINED_BYTES);
  expect(await broker().messageCount(queue)).toBe(0);
}, 180_000);
