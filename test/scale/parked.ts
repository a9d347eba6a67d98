/**
 * The parking-lot commands at scale: seeds N parked messages of 1 KB (default 100 000) in a fresh
 * quorum queue, then lists them all, replays half (to a queue of its own) and purges the other half,
 * printing time, rate and the most memory held (heap + Buffers, after a full collection) for each.
 * Fails (exit 1) when a count is off or a walk held more than 16 MB.
 *
 *   npx tsx test/scale/parked.ts [count]        # about 3 minutes for 100 000 on a laptop
 *
 * Uses AMQP_URL (default: the local broker) and deletes its queues at the end.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { CommandContext } from '../../shared/parked/context.js';
import { EVERYTHING } from '../../shared/parked/filters.js';
import { listParked } from '../../shared/parked/list.js';
import type { Progress } from '../../shared/parked/progress.js';
import { purgeParked } from '../../shared/parked/purge.js';
import { replayParked } from '../../shared/parked/replay.js';
import type { WalkCounts } from '../../shared/parked/walk.js';
import { TestBroker, uniqueName } from '../helpers/broker.js';

const COUNT = Number(process.argv[2] ?? 100_000);
const MAX_HELD_BYTES = 16 * 1024 * 1024;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const usedBytes = (): number => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;

/** Samples memory after a full collection every 5 000 messages. */
class Sampler implements Progress {
  public peak = 0;
  private at = 0;

  public update(counts: Readonly<WalkCounts>): void {
    if (counts.visited - this.at < 5000) return;
    this.at = counts.visited;
    gc();
    this.peak = Math.max(this.peak, usedBytes());
  }

  public print(): void {}

  public stop(): void {}
}

const broker = await TestBroker.open();
const parked = uniqueName('scale-parked');
const sink = uniqueName('scale-sink');
broker.trackQueue(parked, sink);
let failed = false;
try {
  const setUp = await broker.connection.createConfirmChannel();
  for (const queue of [parked, sink]) await setUp.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  const body = Buffer.alloc(1024, 'x');
  const seedStart = Date.now();
  for (let i = 0; i < COUNT; i++) {
    setUp.sendToQueue(parked, body, { persistent: true, messageId: `m-${i}`, headers: { half: i % 2 === 0 ? 'a' : 'b', 'boomerang-source-queue': sink } });
    if (i % 5000 === 4999) await setUp.waitForConfirms();
  }
  await setUp.waitForConfirms();
  await setUp.close();
  process.stdout.write(`seeded ${COUNT} parked messages of 1 KB in ${((Date.now() - seedStart) / 1000).toFixed(1)} s\n`);

  const half = { ...EVERYTHING, headers: [{ name: 'half', value: 'a' }] };
  const steps: [string, (ctx: CommandContext) => Promise<WalkCounts>, (r: WalkCounts) => boolean][] = [
    ['list', (ctx) => listParked(ctx, { filter: EVERYTHING, json: true, limit: 0 }), (r) => r.visited === COUNT && r.kept === COUNT],
    [
      'replay half',
      (ctx) => replayParked(ctx, { filter: half, workQueue: sink, keepCount: false, dryRun: false, retryHeader: 'x-retry-no' }),
      (r) => r.moved === COUNT / 2,
    ],
    ['purge the rest', (ctx) => purgeParked(ctx, { filter: EVERYTHING, dryRun: false }), (r) => r.deleted === COUNT / 2],
  ];
  for (const [name, run, ok] of steps) {
    const channel = await broker.connection.createConfirmChannel();
    const sampler = new Sampler();
    gc();
    const before = usedBytes();
    const started = Date.now();
    const result = await run({ channel, queue: parked, publishTimeoutMs: 30_000, progress: () => sampler });
    await channel.close();
    const seconds = (Date.now() - started) / 1000;
    const held = Math.max(0, sampler.peak - before);
    const good = ok(result) && held < MAX_HELD_BYTES;
    failed ||= !good;
    process.stdout.write(
      `${name.padEnd(15)} ${String(result.visited).padStart(7)} read in ${seconds.toFixed(1).padStart(6)} s  ${String(Math.round(result.visited / seconds)).padStart(6)} msg/s  held at most ${(held / 1024 / 1024).toFixed(1)} MB  ${good ? 'ok' : 'FAILED'}\n`,
    );
  }
  const left = await broker.messageCount(parked);
  const replayed = await broker.messageCount(sink);
  failed ||= left !== 0 || replayed !== COUNT / 2;
  process.stdout.write(`parking lot now ${left}, replayed ${replayed}: ${failed ? 'FAILED' : 'ok'}\n`);
} finally {
  await broker.close();
}
process.exitCode = failed ? 1 : 0;
