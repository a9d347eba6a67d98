/**
 * What the pause marker costs an invocation (docs/handlers.md, "What it costs"): the start of a pull or
 * event invocation (its own confirm channel) with the marker read beside it (a declare of the marker
 * queue), not paused and paused now; the write, once per pause; and, with NATIVE=1 (RabbitMQ 4.3+), the
 * start of a native invocation (the management pair and the work queue's receiver) without and with the
 * read. Each variant runs in turn, N rounds, so that load spikes hit them alike; the medians are
 * printed and written to bench-results/pause-marker-cost-rabbitmq-<version>.json (the docs' figures).
 * Not part of `npm run bench`: run it on its own, on a quiet machine.
 * @example AMQP_URL=amqp://guest:guest@127.0.0.1:5674 NATIVE=1 N=200 npx tsx test/bench/pause-marker-cost.ts
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import amqp from 'amqplib';
import { amqp091PauseMarker } from '../../shared/amqp/pause-marker.js';
import type { PauseMarker } from '../../shared/amqp/pause-marker.js';
import { Amqp10Management } from '../../shared/native/amqp10-management.js';
import { connectAmqp10 } from '../../shared/native/amqp10-connection.js';
import { amqp10PauseMarker } from '../../shared/native/amqp10-pause-marker.js';
import { NativeReceiver } from '../../shared/native/native-receiver.js';
import { AMQP_URL, sleep, uniqueName } from '../helpers/broker.js';
import { REPO_ROOT } from '../helpers/invoke-child.js';

const ROUNDS = Number(process.env.N ?? 100);
const FAR = 600_000;

function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
}

/** Each section's medians, by variant, in ms: what the results file keeps. */
const results: Record<string, Record<string, number>> = {};

async function compare(title: string, variants: Readonly<Record<string, () => Promise<unknown>>>): Promise<void> {
  const times = new Map(Object.keys(variants).map((name) => [name, [] as number[]]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, run] of Object.entries(variants)) {
      const start = performance.now();
      await run();
      times.get(name)?.push(performance.now() - start);
    }
  }
  console.log(title);
  results[title] = {};
  for (const [name, values] of times) {
    console.log(`  ${name.padEnd(60)} ${median(values).toFixed(2)} ms`);
    results[title][name] = Number(median(values).toFixed(2));
  }
}

const mark = (untilMs: number) => ({ untilMs, queue: 'cost', errorName: 'PartnerRateLimitedError', messageId: undefined });
const BY = 'pause-marker-cost';

const connection = await amqp.connect(AMQP_URL, { noDelay: true });
const cleanup = await connection.createChannel();
const version = String(connection.connection.serverProperties.version);
console.log(`RabbitMQ ${version}, ${ROUNDS} rounds`);
const notPaused = amqp091PauseMarker(connection, uniqueName('cost'));
const now = amqp091PauseMarker(connection, uniqueName('cost'));
await notPaused.write(mark(Date.now() + 100), BY);
await now.write(mark(Date.now() + FAR), BY);
await sleep(200);
const start = async (marker?: PauseMarker): Promise<void> => {
  const [channel] = await Promise.all([connection.createConfirmChannel(), marker?.read()]);
  await channel.close();
};
await compare('0-9-1: a pull or event invocation opens its confirm channel, and reads the marker beside it', {
  'channel alone (before)': () => start(),
  'channel + read, not paused (declare: the marker queue is empty)': () => start(notPaused),
  'channel + read, paused (declare, then reads the marker)': () => start(now),
});
await compare('0-9-1: once per pause', { 'write (open, confirm.select, declare, publish + confirm)': () => now.write(mark(Date.now() + FAR), BY) });
for (const marker of [notPaused, now]) await cleanup.deleteQueue(marker.queue);

if (process.env.NATIVE === '1') {
  const native = await connectAmqp10({ urls: [AMQP_URL], connectTimeoutMs: 5000, connectionName: 'pause-marker-cost' });
  const workQueue = uniqueName('cost');
  const paused = uniqueName('cost');
  await cleanup.assertQueue(workQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  const management = await Amqp10Management.open(native.connection);
  await amqp10PauseMarker(native.connection, async () => management, paused).write(mark(Date.now() + FAR), BY);
  const invocation = async (markerOf?: string): Promise<void> => {
    const pair = Amqp10Management.open(native.connection).catch(() => undefined);
    if (markerOf !== undefined) await amqp10PauseMarker(native.connection, () => pair, markerOf).read();
    const receiver = await NativeReceiver.open(native.connection, workQueue, 10);
    receiver.close();
    (await pair)?.close();
  };
  await compare('AMQP 1.0: a native invocation attaches the management pair and its receiver; the read comes between', {
    'pair beside the receiver (before)': () => invocation(),
    'pair, PUT marker (not paused), then receiver': () => invocation(workQueue),
    'pair, PUT marker, read it (paused), then receiver': () => invocation(paused),
  });
  await compare('AMQP 1.0: once per pause', {
    'write (PUT, session, sender, accepted)': () => amqp10PauseMarker(native.connection, async () => management, paused).write(mark(Date.now() + FAR), BY),
  });
  management.close();
  for (const queue of [workQueue, `${workQueue}.pause`, `${paused}.pause`]) await cleanup.deleteQueue(queue);
  await native.close();
}
await connection.close();
const file = join(REPO_ROOT, 'bench-results', `pause-marker-cost-rabbitmq-${version}.json`);
await writeFile(
  file,
  `${JSON.stringify({ broker: `RabbitMQ ${version}`, rounds: ROUNDS, recordedAt: new Date().toISOString(), unit: 'ms, median', results }, null, 2)}\n`,
);
console.log(`written to ${file}`);
