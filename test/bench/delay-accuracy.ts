/**
 * Delay accuracy: the same N random delays (uniform in [min, max], seeded) go through three delay
 * paths at the same time, in one window, in this one process:
 * - `exact`: the pull function, DELAY_MODE=exact (binary levels, 1 s resolution);
 * - `tiers`: the pull function, DELAY_MODE=tiers with tiers 1, 2, 4, 8, 16, 32 s (a delay waits in the
 *   next tier up, by design);
 * - `native` (RabbitMQ 4.3+, with `modes`): the pull function on a native queue, DELAY_MODE=native: the
 *   work queue holds each failed message until the `x-opt-delivery-time` its settlement names;
 * - anchor: one quorum queue with a per-message `expiration`, dead-lettering to a consumed queue (the
 *   naive design, amqplib-retry's).
 * For the pull function, a message's delay starts when its handler throws (asking for exactly its
 * delay with `retryAfterMs`) and ends when it is handed to the handler again. The function is invoked
 * back to back (a scheduler every minute would add up to a minute), so this measures the delay path.
 * Lateness = arrival - due. Out of due order = a message that arrives after one due later than it
 * (by more than the given tolerance).
 */
import { randomUUID } from 'node:crypto';
import type { ConsumeMessage } from 'amqplib';
import { loadConfig, topologyOptionsFromConfig, type Config } from '../../shared/config/config.js';
import { silentLogger } from '../helpers/fakes.js';
import type { Handler } from '../../shared/message/message.js';
import { runNativePull } from '../../shared/native/native-pull.js';
import { runPull } from '../../shared/pull/pull.js';
import { applyTopology } from '../../shared/topology/apply.js';
import { allExchanges, buildTopologyPlan } from '../../shared/topology/plan.js';
import type { TopologyPlan } from '../../shared/topology/types.js';
import { seededRandom } from '../helpers/seeded-random.js';
import type { BenchBroker } from './bench-broker.js';
import { fmt, type Row } from './report.js';
import { spread, type Spread } from './stats.js';

type DelayOptions = {
  readonly broker: BenchBroker;
  readonly messages: number;
  readonly minMs: number;
  readonly maxMs: number;
  readonly seed: number;
  readonly progress: (line: string) => void;
  /** The pull function's modes in the window, next to the anchor. @default ['exact', 'tiers'] */
  readonly modes?: readonly DelayMode[];
};

type DelayMode = 'exact' | 'tiers' | 'native';

type Arrival = { readonly i: number; readonly dueAt: number; readonly at: number };

type ModeResult = {
  readonly arrived: number;
  readonly latenessMs: Spread;
  readonly early: number;
  readonly outOfOrder: number;
  readonly outOfOrderBeyond1s: number;
};

const RESOLUTION_MS = 1000;

/** Messages that arrive after one that was due more than `toleranceMs` later than them. */
function outOfDueOrder(arrivals: readonly Arrival[], toleranceMs: number): number {
  let latestDueSoFar = -Infinity;
  let count = 0;
  for (const a of [...arrivals].sort((x, y) => x.at - y.at)) {
    if (latestDueSoFar > a.dueAt + toleranceMs) count++;
    latestDueSoFar = Math.max(latestDueSoFar, a.dueAt);
  }
  return count;
}

function summarize(arrivals: readonly Arrival[]): ModeResult {
  return {
    arrived: arrivals.length,
    latenessMs: spread(arrivals.map((a) => a.at - a.dueAt)),
    early: arrivals.filter((a) => a.at < a.dueAt).length,
    outOfOrder: outOfDueOrder(arrivals, 0),
    outOfOrderBeyond1s: outOfDueOrder(arrivals, RESOLUTION_MS),
  };
}

/** A pull-function mode: its config, and a handler that fails once asking for the message's delay. */
function functionMode(broker: BenchBroker, env: Record<string, string>, delays: readonly number[]) {
  const config = loadConfig({
    AMQP_URL: broker.url,
    WORK_QUEUE: `bench-delay-${randomUUID().slice(0, 8)}`,
    BACKOFF_INITIAL_MS: String(RESOLUTION_MS),
    BACKOFF_MULTIPLIER: '2',
    BACKOFF_JITTER: '0',
    IDLE_TIMEOUT_MS: '2000',
    BREAKER_THRESHOLD: '0',
    ...env,
  });
  const failedAt = new Map<number, number>();
  const arrivals = new Map<number, Arrival>();
  const handler: Handler = (message) => {
    const { i } = message.json<{ i: number }>();
    const delayMs = delays[i] as number;
    if (message.retryNo === 0) {
      failedAt.set(i, Date.now());
      throw Object.assign(new Error('come back later'), { retryAfterMs: delayMs });
    }
    if (!arrivals.has(i)) arrivals.set(i, { i, dueAt: (failedAt.get(i) ?? 0) + delayMs, at: Date.now() });
  };
  return { config, plan: buildTopologyPlan(topologyOptionsFromConfig(config)), handler, arrivals };
}

/** The env of each mode (six tiers, 1 to 32 s, so every delay up to 30 s has a tier at or above it). */
function modeEnv(mode: DelayMode): Record<string, string> {
  if (mode === 'exact') return { DELAY_MODE: 'exact', MAX_RETRIES: '1', EXACT_DELAY_PREFIX: `bench-delay-${randomUUID().slice(0, 8)}` };
  if (mode === 'tiers') return { DELAY_MODE: 'tiers', MAX_RETRIES: '6' };
  return { DELAY_MODE: 'native', QUEUE_TYPE: 'quorum', MAX_RETRIES: '1' };
}

/** Invokes the function back to back until every message came back or the deadline passed. */
async function pullLoop(config: Config, handler: Handler, done: () => boolean, deadline: number): Promise<void> {
  const run = config.delayMode === 'native' ? runNativePull : runPull;
  while (!done() && Date.now() < deadline) {
    await run({ config, handler, budgetMs: 20_000, log: silentLogger }).catch(() => undefined);
  }
}

async function delayAccuracy(options: DelayOptions): Promise<{ result: Record<string, ModeResult>; rows: Row[] }> {
  const { broker } = options;
  const random = seededRandom(options.seed);
  const delays = Array.from({ length: options.messages }, () => Math.round(options.minMs + random() * (options.maxMs - options.minMs)));
  const modes = (options.modes ?? ['exact', 'tiers']).map((mode) => ({ mode, ...functionMode(broker, modeEnv(mode), delays) }));
  const anchorQueue = `bench-delay-anchor-${randomUUID().slice(0, 8)}`;
  const anchorBack = `${anchorQueue}.back`;
  const plans: TopologyPlan[] = modes.map((m) => m.plan);
  try {
    for (const plan of plans) await applyTopology(broker.connection, plan);
    const setup = await broker.connection.createChannel();
    await setup.assertQueue(anchorBack, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    await setup.assertQueue(anchorQueue, {
      durable: true,
      arguments: {
        'x-queue-type': 'quorum',
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': anchorBack,
        'x-dead-letter-strategy': 'at-least-once',
        'x-overflow': 'reject-publish',
      },
    });
    await setup.close();

    // The anchor's consumer runs for the whole window.
    const anchorArrivals = new Map<number, Arrival>();
    const anchorDue = new Map<number, number>();
    const consumer = await broker.connection.createChannel();
    await consumer.prefetch(100);
    await consumer.consume(anchorBack, (message: ConsumeMessage | null) => {
      if (message === null) return;
      const { i } = JSON.parse(message.content.toString()) as { i: number };
      if (!anchorArrivals.has(i)) anchorArrivals.set(i, { i, dueAt: anchorDue.get(i) ?? 0, at: Date.now() });
      consumer.ack(message);
    });

    // Start: the same messages, in the same order, into every mode and the anchor at once.
    const publisher = await broker.connection.createConfirmChannel();
    const startedAt = Date.now();
    for (let i = 0; i < options.messages; i++) {
      const body = Buffer.from(JSON.stringify({ i }));
      for (const m of modes) publisher.sendToQueue(m.config.workQueue, body, { persistent: true, messageId: `d-${i}` });
      anchorDue.set(i, Date.now() + (delays[i] as number));
      publisher.sendToQueue(anchorQueue, body, { persistent: true, messageId: `d-${i}`, expiration: String(delays[i]) });
    }
    await publisher.waitForConfirms();
    await publisher.close();
    options.progress(`  ${fmt(options.messages)} messages started in each mode; waiting about ${Math.round(options.maxMs / 1000) + 3} s`);
    const deadline = startedAt + options.maxMs * 1.2 + 60_000;
    const everyone = (m: Map<number, Arrival>) => () => m.size >= options.messages;
    await Promise.all([
      ...modes.map((m) => pullLoop(m.config, m.handler, everyone(m.arrivals), deadline)),
      (async () => {
        while (!everyone(anchorArrivals)() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      })(),
    ]);
    await consumer.close();
    const result: Record<string, ModeResult> = Object.fromEntries(modes.map((m) => [m.mode, summarize([...m.arrivals.values()])]));
    result['per-message expiration'] = summarize([...anchorArrivals.values()]);
    return { result, rows: rowsFor(options, result) };
  } finally {
    for (const plan of plans) {
      for (const queue of plan.queues) await broker.deleteQueue(queue.name);
      for (const exchange of allExchanges(plan)) await broker.deleteExchange(exchange.name);
    }
    await broker.deleteQueue(anchorQueue);
    await broker.deleteQueue(anchorBack);
  }
}

function describeMode(r: ModeResult, n: number): string {
  const s = (ms: number) => (ms / 1000).toFixed(2);
  const missing = n - r.arrived;
  return (
    `p50 ${s(r.latenessMs.p50)} s, p99 ${s(r.latenessMs.p99)} s, max ${s(r.latenessMs.max)} s; early ${r.early}; ` +
    `out of due order ${r.outOfOrder} (${r.outOfOrderBeyond1s} by > 1 s)${missing > 0 ? `; ${missing} NOT BACK` : ''}`
  );
}

/** Native lateness is measured in milliseconds: `min 1 ms, p50 4 ms, p99 30 ms, max 90 ms`. */
function describeMs(r: ModeResult, n: number): string {
  const { min, p50, p99, max } = r.latenessMs;
  const missing = n - r.arrived;
  return `min ${fmt(min)} ms, p50 ${fmt(p50)} ms, p99 ${fmt(p99)} ms, max ${fmt(max)} ms; early ${r.early}; out of due order ${r.outOfOrder}${missing > 0 ? `; ${missing} NOT BACK` : ''}`;
}

/** Every message back no more than this late: the native target (the broker holds each message itself). */
const NATIVE_LATENESS_TARGET_MS = 100;

function rowsFor(options: DelayOptions, result: Record<string, ModeResult>): Row[] {
  const n = options.messages;
  const anchor = `${describeMode(result['per-message expiration'] as ModeResult, n)} (one quorum queue, per-message \`expiration\`)`;
  const { exact, tiers, native } = result;
  const together = Object.keys(result)
    .map((k) => `\`${k}\``)
    .join(', ');
  const window = `${fmt(n)} messages, delays uniform ${options.minMs / 1000}-${options.maxMs / 1000} s (seed ${options.seed}), ${together} in one window`;
  const rows: Row[] = [];
  if (exact !== undefined) {
    const meets = exact.arrived === n && exact.early === 0 && exact.latenessMs.p99 <= RESOLUTION_MS + 1000 && exact.outOfOrderBeyond1s === 0;
    const target = 'p99 ≤ resolution + 1 s (2 s), no inversion beyond the resolution';
    rows.push({
      section: 'delay accuracy',
      metric: `\`exact\` lateness, ${window}`,
      boomerang: describeMode(exact, n),
      anchor,
      ratio: '-',
      target,
      verdict: meets ? 'meets' : 'misses',
    });
  }
  if (tiers !== undefined) {
    rows.push({
      section: 'delay accuracy',
      metric: `\`tiers\` lateness (tiers 1, 2, 4, 8, 16, 32 s), same window`,
      boomerang: describeMode(tiers, n),
      anchor: exact === undefined ? anchor : 'as above',
      ratio: '-',
      target: 'by design: waits up to the next tier',
      verdict: 'info',
    });
  }
  if (native !== undefined) {
    const meets = native.arrived === n && native.early === 0 && native.latenessMs.max <= NATIVE_LATENESS_TARGET_MS;
    rows.push({
      section: 'native',
      metric: `\`native\` lateness (handler fails each message once with Retry-After = its delay; invoked back to back, 20 s budget), ${window}`,
      boomerang: describeMs(native, n),
      anchor,
      ratio: '-',
      target: `every message ≤ ${NATIVE_LATENESS_TARGET_MS} ms late (max), none early`,
      verdict: meets ? 'meets' : 'misses',
    });
  }
  return rows;
}

export { delayAccuracy, outOfDueOrder };
export type { DelayMode, DelayOptions, ModeResult };
