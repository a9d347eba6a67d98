/**
 * Grouping at scale (issue 11, item 4): seeds N parked messages of 1 KB (default 100 000) of five
 * kinds in a fresh quorum queue, groups them with `groupParked` (the function behind `parked groups`
 * and the console), and prints the time, the most memory held (heap + Buffers after a full
 * collection, above the start) and the peak RSS of the process. Fails (exit 1) when a count is off,
 * the parking lot changed, or the grouping held 64 MB or more (the time is reported, not judged:
 * these machines are noisy).
 *
 *   npx tsx test/scale/parked-groups.ts [count]
 *
 * Uses AMQP_URL (default: the local broker) and deletes its queue at the end.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { groupParked } from '../../shared/parked/groups.js';
import type { Progress } from '../../shared/parked/progress.js';
import type { WalkCounts } from '../../shared/parked/walk.js';
import { TestBroker, uniqueName } from '../helpers/broker.js';

const COUNT = Number(process.argv[2] ?? 100_000);
const MAX_HELD_BYTES = 64 * 1024 * 1024;

/** Five causes; each message's text differs (numbers, ids, URLs) the way real errors do. */
const KINDS = [
  (i: number) => ['PartnerDown', `POST https://partner.example/hooks/${i} returned 50${i % 4}`],
  (i: number) => ['ValidationError', `order-${i}: field amount is missing`],
  (i: number) => ['TimeoutError', `no answer after ${3000 + (i % 997)}ms`],
  (i: number) => ['NotFound', `customer ${i.toString(16).padStart(12, '0')}abcd not found`],
  (i: number) => ['RateLimited', `429 from api.example.com, retry after ${i % 60}s`],
] as const;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const usedBytes = (): number => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;

/** Samples memory after a full collection every 5 000 messages, and RSS at every report. */
class Sampler implements Progress {
  public peakUsed = 0;
  public peakRss = 0;
  private at = 0;

  public update(counts: Readonly<WalkCounts>): void {
    this.peakRss = Math.max(this.peakRss, process.memoryUsage().rss);
    if (counts.visited - this.at < 5000) return;
    this.at = counts.visited;
    gc();
    this.peakUsed = Math.max(this.peakUsed, usedBytes());
  }

  public print(): void {}

  public stop(): void {}
}

const broker = await TestBroker.open();
const parked = uniqueName('scale-groups');
broker.trackQueue(parked);
let failed = false;
try {
  const setUp = await broker.connection.createConfirmChannel();
  await setUp.assertQueue(parked, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  const body = Buffer.alloc(1024, 'x');
  const seedStart = Date.now();
  for (let i = 0; i < COUNT; i++) {
    const [errorName, errorMessage] = (KINDS[i % KINDS.length] as (typeof KINDS)[number])(i);
    setUp.sendToQueue(parked, body, {
      persistent: true,
      messageId: `m-${i}`,
      headers: {
        'boomerang-error-name': errorName,
        'boomerang-error-message': errorMessage,
        'boomerang-source-queue': 'orders',
        'boomerang-parked-at': new Date(seedStart + i).toISOString(),
      },
    });
    if (i % 5000 === 4999) await setUp.waitForConfirms();
  }
  await setUp.waitForConfirms();
  await setUp.close();
  const { version } = (broker.connection.connection as unknown as { serverProperties: { version: string } }).serverProperties;
  process.stdout.write(
    `RabbitMQ ${version}, Node ${process.version}: seeded ${COUNT} parked messages of 1 KB in ${((Date.now() - seedStart) / 1000).toFixed(1)} s\n`,
  );

  const channel = await broker.connection.createConfirmChannel();
  const sampler = new Sampler();
  gc();
  const before = usedBytes();
  const started = Date.now();
  const result = await groupParked({ channel, queue: parked, publishTimeoutMs: 30_000, progress: () => sampler });
  await channel.close();
  const seconds = (Date.now() - started) / 1000;
  const held = Math.max(0, sampler.peakUsed - before);
  const counts = result.groups.map((g) => g.count);
  const countsOk =
    result.groups.length === KINDS.length && counts.reduce((a, b) => a + b, 0) === COUNT && counts.every((c) => Math.abs(c - COUNT / KINDS.length) <= 1);
  const left = await broker.messageCount(parked);
  failed = !countsOk || left !== COUNT || held >= MAX_HELD_BYTES;
  for (const g of result.groups) process.stdout.write(`  ${String(g.count).padStart(7)}  ${g.key}\n`);
  process.stdout.write(
    `grouped ${result.visited} in ${seconds.toFixed(1)} s (${Math.round(result.visited / seconds)} msg/s), ${result.groups.length} groups; ` +
      `held at most ${(held / 1024 / 1024).toFixed(1)} MB (heap + Buffers above the ${(before / 1024 / 1024).toFixed(1)} MB at the start; peak ${(sampler.peakUsed / 1024 / 1024).toFixed(1)} MB), peak RSS ${(sampler.peakRss / 1024 / 1024).toFixed(0)} MB; parking lot still ${left}: ${failed ? 'FAILED' : 'ok'}\n`,
  );
} finally {
  await broker.close();
}
process.exitCode = failed ? 1 : 0;
