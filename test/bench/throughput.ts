/**
 * Success and retry throughput of one pull invocation, each next to its anchors measured in the same
 * run, on the same queues, interleaved round by round (the order rotates) so that a noisy neighbour
 * slows every contestant alike. Each contestant starts from the same preloaded queue of N persistent
 * 1 KiB messages and runs in its own fresh plain-node process (contestant-child.mjs): Boomerang as
 * the Lambda bundle runs it, the anchors as hand-written amqplib and Rascal. Each is timed from
 * connect to the last message settled (Boomerang: the whole invocation, connect and close included,
 * with MAX_MESSAGES = N so it stops on the last one).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, topologyOptionsFromConfig, type Config } from '../../shared/config/config.js';
import { applyTopology } from '../../shared/topology/apply.js';
import { buildTopologyPlan, markerExchanges } from '../../shared/topology/plan.js';
import { tierQueueName } from '../../shared/topology/tiers.js';
import { REPO_ROOT } from '../helpers/invoke-child.js';
import type { BenchBroker } from './bench-broker.js';
import { ensureBundles, LIBRARY_BUNDLE } from './bundles.js';
import { fmt, pct, type Row } from './report.js';
import { median } from './stats.js';
import { promotedBytes, resultAndTrace } from '../helpers/gc-trace.js';
import { brokerCpu, duringWork } from './broker-cpu.js';

type ThroughputOptions = {
  readonly broker: BenchBroker;
  readonly messages: number;
  readonly rounds: number;
  readonly queueType: 'quorum' | 'classic';
  readonly progress: (line: string) => void;
  /**
   * Adds Boomerang with `TRACING=opentelemetry` to the success and retry contests: a tracer provider
   * registered in the child, a batch span processor and an exporter that drops the spans. @default false
   */
  readonly tracing?: boolean;
  /**
   * A bench bundle of another commit (its `dist/bench/boomerang/index.mjs`), run as one more contestant
   * in the success, retry and native contests and the idempotency section's I/O contest: a before-and-after measured in the same rounds, where
   * two separate runs differ by more than most changes do. @default none
   */
  readonly baseline?: string;
};

type Timing = {
  readonly ms: number;
  readonly cpuMicrosPerMessage: number;
  /** Bytes V8's scavenges promoted to the old generation over the process's life, per message (from --trace-gc-nvp). */
  readonly promotedBytesPerMessage?: number;
};

type Contestant = { readonly name: string; readonly run: () => Promise<Timing> };

type ContestResult = Record<
  string,
  {
    readonly ratesPerSecond: number[];
    readonly medianPerSecond: number;
    /** Client CPU (user + system) per message, per round. */
    readonly cpuMicrosPerMessage: number[];
    readonly medianCpuMicrosPerMessage: number;
    /** Bytes promoted to the old generation per message, per round (the bundle contests). */
    readonly promotedBytesPerMessage?: number[];
    readonly medianPromotedBytesPerMessage?: number;
    /** The broker's own CPU per message during the run, per round (a broker on this machine: broker-cpu.ts). */
    readonly brokerCpuMicrosPerMessage?: number[];
    readonly medianBrokerCpuMicrosPerMessage?: number;
  }
>;

/** A delay long enough that no copy comes back during the measurement. */
const PARKED_DELAY_MS = 600_000;

type Setup = {
  config: Config;
  env: Record<string, string>;
  delayQueue: string;
  delayArguments: Record<string, string | number>;
  names: string[];
  exchanges: string[];
};

async function setUp(options: ThroughputOptions, label: 'success' | 'retry' | 'native', overrides: Readonly<Record<string, string>> = {}): Promise<Setup> {
  const env: Record<string, string> = {
    AMQP_URL: options.broker.url,
    WORK_QUEUE: `bench-${label}-${randomUUID().slice(0, 8)}`,
    QUEUE_TYPE: options.queueType,
    MAX_RETRIES: '1',
    BACKOFF_INITIAL_MS: String(PARKED_DELAY_MS),
    BACKOFF_JITTER: '0',
    MAX_MESSAGES: String(options.messages),
    LOG_LEVEL: 'silent',
    // Every message fails on purpose in the retry path: the breaker must not stop the invocation.
    ...(label === 'success' ? {} : { BREAKER_THRESHOLD: '0' }),
    ...overrides,
  };
  const config = loadConfig(env);
  const plan = buildTopologyPlan(topologyOptionsFromConfig(config));
  await applyTopology(options.broker.connection, plan);
  const delayQueue = tierQueueName(config.workQueue, PARKED_DELAY_MS);
  const delayArguments = { ...(plan.queues.find((q) => q.name === delayQueue)?.arguments ?? {}) };
  return { config, env, delayQueue, delayArguments, names: plan.queues.map((q) => q.name), exchanges: markerExchanges(plan).map((x) => x.name) };
}

type ChildRun = {
  readonly who: 'boomerang' | 'raw' | 'rhea' | 'rhea-checked' | 'rascal';
  /** `io`: the handler waits 5 ms on a timer, as one that calls a partner waits on I/O (idempotency section). */
  readonly mode: 'success' | 'retry' | 'io';
  readonly setup: Setup;
  readonly options: ThroughputOptions;
  /** Goes over the setup's environment (the idempotency section's store). @default none */
  readonly env?: Readonly<Record<string, string>>;
  /** Boomerang's bundle to run. @default this checkout's bench bundle */
  readonly module?: string;
};

/** What contestant-child.mjs reads from its argument: one contestant's run over `messages` messages of `setup`. */
function childArgs(run: Pick<ChildRun, 'who' | 'mode' | 'setup'>, url: string, messages: number, module?: string): string {
  const { who, mode, setup } = run;
  return JSON.stringify({
    who,
    mode,
    url,
    queue: setup.config.workQueue,
    messages,
    prefetch: setup.config.batchSize,
    concurrency: setup.config.concurrency,
    delayQueue: setup.delayQueue,
    delayQueueArguments: setup.delayArguments,
    delayMs: PARKED_DELAY_MS,
    module,
  });
}

/** Contestant processes started with a CPU profile so far: numbers their files. */
let profiled = 0;

/**
 * With BENCH_CPU_PROF_DIR set, each contestant process writes a V8 CPU profile there
 * (`<who>-<mode>-<n>.cpuprofile`, for Chrome's DevTools): where a figure's client CPU goes.
 */
function cpuProfileArgs(label: string): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  return dir === undefined || dir === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${label}-${++profiled}.cpuprofile`];
}

/** Runs one contestant in a fresh process (see contestant-child.mjs); resolves with its time in ms. */
function runContestant({ who, mode, setup, options, env, module }: ChildRun): Promise<Timing> {
  // The bundle as Lambda runs it; without one, the sources under tsx (slower: it maps stack traces).
  const bundled = existsSync(LIBRARY_BUNDLE);
  const args = childArgs({ who, mode, setup }, options.broker.url, options.messages, module ?? (bundled ? LIBRARY_BUNDLE : join(REPO_ROOT, 'shared/index.ts')));
  // --trace-gc-nvp: one line per collection on stdout, around the result's line; what a message's
  // objects cost the collector shows in the bytes promoted (docs/proof.md, work in hand).
  const node = [...(bundled ? [] : ['--import', 'tsx']), '--trace-gc-nvp', ...cpuProfileArgs(`${who}-${mode}`)];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...node, join(REPO_ROOT, 'test/bench/contestant-child.mjs'), args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...setup.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${who} (${mode}) failed: ${err.slice(-600)}`));
      const { result, traceLines } = resultAndTrace(out);
      if (result === undefined) return reject(new Error(`${who} (${mode}) printed no result: ${out.slice(-600)}`));
      resolve({ ...(JSON.parse(result) as Timing), promotedBytesPerMessage: promotedBytes(traceLines) / options.messages });
    });
  });
}

/** `freshIds`: each preload gets message ids never used before (runs with idempotency on would skip the old ones). */
async function contest(
  options: ThroughputOptions,
  queue: string,
  contestants: readonly Contestant[],
  afterEach: () => Promise<void>,
  freshIds = false,
): Promise<ContestResult> {
  const rates = new Map<string, number[]>(contestants.map((c) => [c.name, []]));
  // New for each bench run too: the store keeps the keys of an earlier run for its window.
  const run = randomUUID().slice(0, 8);
  const cpu = new Map<string, number[]>(contestants.map((c) => [c.name, []]));
  const promoted = new Map<string, number[]>(contestants.map((c) => [c.name, []]));
  const brokerMicros = new Map<string, number[]>(contestants.map((c) => [c.name, []]));
  const readBroker = brokerCpu(options.broker.url);
  for (let round = 0; round < options.rounds; round++) {
    // Rotate the order each round, so no contestant always runs first (or last) on a warm broker.
    const order = contestants.map((_, i) => contestants[(i + round) % contestants.length] as Contestant);
    for (const contestant of order) {
      await options.broker.preload(queue, options.messages, 1024, {}, freshIds ? `${run}-r${round}-${contestant.name.replace(/\W+/g, '-')}` : 'm');
      const [{ ms, cpuMicrosPerMessage, promotedBytesPerMessage }, brokerMs] = await duringWork(readBroker, contestant.run);
      const brokerPerMessage = brokerMs === undefined ? undefined : (brokerMs * 1000) / options.messages;
      const left = await options.broker.count(queue);
      if (left !== 0) throw new Error(`${contestant.name} left ${left} messages in ${queue}`);
      await afterEach();
      const rate = (options.messages / ms) * 1000;
      rates.get(contestant.name)?.push(rate);
      cpu.get(contestant.name)?.push(cpuMicrosPerMessage);
      if (promotedBytesPerMessage !== undefined) promoted.get(contestant.name)?.push(promotedBytesPerMessage);
      if (brokerPerMessage !== undefined) brokerMicros.get(contestant.name)?.push(brokerPerMessage);
      options.progress(
        `  round ${round + 1}/${options.rounds} ${contestant.name}: ${fmt(rate)} msg/s (${fmt(ms)} ms), client CPU ${fmt(cpuMicrosPerMessage)} µs/msg, ${fmt(promotedBytesPerMessage ?? 0)} B/msg promoted${brokerPerMessage === undefined ? '' : `, broker CPU ${fmt(brokerPerMessage)} µs/msg`}`,
      );
    }
  }
  return Object.fromEntries(
    [...rates].map(([name, list]) => {
      const cpuList = cpu.get(name) ?? [];
      const promotedList = promoted.get(name) ?? [];
      return [
        name,
        {
          ratesPerSecond: list,
          medianPerSecond: median(list),
          cpuMicrosPerMessage: cpuList,
          medianCpuMicrosPerMessage: median(cpuList),
          ...(promotedList.length === 0 ? {} : { promotedBytesPerMessage: promotedList, medianPromotedBytesPerMessage: median(promotedList) }),
          ...brokerFigures(brokerMicros.get(name) ?? []),
        },
      ];
    }),
  );
}

/** The environment of Boomerang traced: the option on, and a provider for the child to register (contestant-child.mjs). */
const TRACED = { TRACING: 'opentelemetry', BENCH_OTEL_PROVIDER: '1' } as const;
const TRACED_NAME = 'boomerang, tracing on';

/** With `--tracing`: Boomerang traced, to run beside Boomerang untraced. */
function tracedContestant(options: ThroughputOptions, mode: 'success' | 'retry', setup: Setup): Contestant[] {
  return options.tracing ? [{ name: TRACED_NAME, run: () => runContestant({ who: 'boomerang', mode, setup, options, env: TRACED }) }] : [];
}

const BASELINE_NAME = 'boomerang, baseline';

/** With `--baseline`: the other commit's Boomerang, to run beside this one. */
function baselineContestant(options: ThroughputOptions, mode: 'success' | 'retry', setup: Setup): Contestant[] {
  const module = options.baseline;
  return module === undefined ? [] : [{ name: BASELINE_NAME, run: () => runContestant({ who: 'boomerang', mode, setup, options, module }) }];
}

/** With `--baseline`: this commit against the baseline, both measured in the same rounds. */
function baselineRow(options: ThroughputOptions, result: ContestResult, section: string, metric: string, who = 'boomerang'): Row[] {
  if (options.baseline === undefined) return [];
  return [
    {
      section,
      metric: `${metric}; this checkout against the baseline bundle (--baseline ${options.baseline})`,
      boomerang: rateAndCpu(result, who),
      anchor: `${rateAndCpu(result, BASELINE_NAME)}: the baseline`,
      ratio: pct(ratioOf(result, who, BASELINE_NAME)),
      target: 'comparison',
      verdict: 'info',
    },
  ];
}

/** With `--tracing`: tracing on against off, both measured in the same run. */
function tracingRow(options: ThroughputOptions, result: ContestResult, section: string, metric: string): Row[] {
  if (!options.tracing) return [];
  return [
    {
      section,
      metric: `${metric}; tracing on (OpenTelemetry: a provider, a batch span processor, an exporter that drops) against off`,
      boomerang: rateAndCpu(result, TRACED_NAME),
      anchor: `${rateAndCpu(result, 'boomerang')}: Boomerang, tracing off (the default)`,
      ratio: pct(ratioOf(result, TRACED_NAME, 'boomerang')),
      target: 'comparison',
      verdict: 'info',
    },
  ];
}

/** Success path: the pull function with a no-op handler against raw consume + ack. */
async function successPath(options: ThroughputOptions): Promise<{ result: ContestResult; rows: Row[] }> {
  await ensureBundles(options.progress);
  const setup = await setUp(options, 'success');
  const { config, names, exchanges } = setup;
  const prefetch = config.batchSize;
  try {
    const result = await contest(
      options,
      config.workQueue,
      [
        { name: 'boomerang', run: () => runContestant({ who: 'boomerang', mode: 'success', setup, options }) },
        { name: 'raw amqplib', run: () => runContestant({ who: 'raw', mode: 'success', setup, options }) },
        ...tracedContestant(options, 'success', setup),
        ...baselineContestant(options, 'success', setup),
      ],
      async () => undefined,
    );
    const ratio = ratioOf(result, 'boomerang', 'raw amqplib');
    const beside = `msg/s, no-op handler, ${fmt(options.messages)} × 1 KiB, ${options.queueType}`;
    const rows: Row[] = [
      {
        section: 'success path',
        metric: `msg/s (median of rounds; ratio = median of per-round ratios), no-op handler, ${fmt(options.messages)} × 1 KiB, ${options.queueType}, batch ${prefetch}, concurrency ${config.concurrency}`,
        boomerang: rateAndCpu(result, 'boomerang'),
        anchor: `${rateAndCpu(result, 'raw amqplib')}: raw amqplib, consume, prefetch ${prefetch}, no-op handler, ack each`,
        ratio: pct(ratio),
        // Boomerang acks in batches where the anchor acks each message: issue 10 asks it stay 1.2× ahead.
        target: '≥ 120 % of raw',
        verdict: ratio >= 1.2 ? 'meets' : 'misses',
      },
      ...tracingRow(options, result, 'success path', beside),
      ...baselineRow(options, result, 'success path', beside),
    ];
    return { result, rows };
  } finally {
    for (const name of names) await options.broker.deleteQueue(name);
    for (const name of exchanges) await options.broker.deleteExchange(name);
  }
}

/** Retry path: every message fails, is copied to the delay path and acked; raw and Rascal alongside. */
async function retryPath(options: ThroughputOptions): Promise<{ result: ContestResult; rows: Row[] }> {
  await ensureBundles(options.progress);
  const setup = await setUp(options, 'retry');
  const { config, delayQueue, names, exchanges } = setup;
  const prefetch = config.batchSize;
  const rascal = { delayQueue: `${config.workQueue}.rascal-delay`, delayExchange: `${config.workQueue}.rascal-delay-x` };
  try {
    const result = await contest(
      options,
      config.workQueue,
      [
        { name: 'boomerang', run: () => runContestant({ who: 'boomerang', mode: 'retry', setup, options }) },
        { name: 'raw amqplib', run: () => runContestant({ who: 'raw', mode: 'retry', setup, options }) },
        { name: 'rascal', run: () => runContestant({ who: 'rascal', mode: 'retry', setup, options }) },
        ...tracedContestant(options, 'retry', setup),
        ...baselineContestant(options, 'retry', setup),
      ],
      async () => {
        // Every contestant must have put all N copies in its delay queue; then start the next one clean.
        const copies = (await options.broker.count(delayQueue)) + Math.max(0, await options.broker.count(rascal.delayQueue));
        if (copies !== options.messages) throw new Error(`expected ${options.messages} copies in the delay queues, found ${copies}`);
        await options.broker.purge(delayQueue);
        await options.broker.purge(rascal.delayQueue);
      },
    );
    const vsRaw = ratioOf(result, 'boomerang', 'raw amqplib');
    const vsRascal = ratioOf(result, 'boomerang', 'rascal');
    const metric = `msg/s (median of rounds; ratio = median of per-round ratios), every message retried (copy confirmed, then ack), ${fmt(options.messages)} × 1 KiB, ${options.queueType}, batch ${prefetch}`;
    const beside = `msg/s, every message retried, ${fmt(options.messages)} × 1 KiB, ${options.queueType}`;
    const rows: Row[] = [
      {
        section: 'retry path',
        metric,
        boomerang: rateAndCpu(result, 'boomerang'),
        anchor: `${rateAndCpu(result, 'raw amqplib')}: raw amqplib, consume, prefetch ${prefetch}, handler throws, publish copy + streamed confirm, ack`,
        ratio: pct(vsRaw),
        target: '≥ 90 % of raw',
        verdict: vsRaw >= 0.9 ? 'meets' : 'misses',
      },
      {
        section: 'retry path',
        metric,
        boomerang: rateAndCpu(result, 'boomerang'),
        anchor: `${rateAndCpu(result, 'rascal')}: Rascal 21 \`forward\` recovery to a TTL delay queue, prefetch ${prefetch}`,
        ratio: `${vsRascal.toFixed(1)} ×`,
        target: 'comparison',
        verdict: 'info',
      },
      ...tracingRow(options, result, 'retry path', beside),
      ...baselineRow(options, result, 'retry path', beside),
    ];
    return { result, rows };
  } finally {
    for (const name of [...names, rascal.delayQueue]) await options.broker.deleteQueue(name);
    for (const name of exchanges) await options.broker.deleteExchange(name);
    await options.broker.deleteExchange(rascal.delayExchange);
  }
}

/**
 * The median over rounds of a's rate / b's rate: the two ran one after the other in each round, so
 * each ratio compares runs that shared the same moment of the machine's noise.
 */
function ratioOf(result: ContestResult, a: string, b: string): number {
  const tops = result[a]?.ratesPerSecond ?? [];
  const bottoms = result[b]?.ratesPerSecond ?? [];
  return median(tops.map((top, i) => top / (bottoms[i] ?? Number.NaN)).filter(Number.isFinite));
}

/** The broker's CPU figures of one contestant, when its CPU was read (broker-cpu.ts). */
function brokerFigures(perRound: number[]): { brokerCpuMicrosPerMessage?: number[]; medianBrokerCpuMicrosPerMessage?: number } {
  return perRound.length === 0 ? {} : { brokerCpuMicrosPerMessage: perRound, medianBrokerCpuMicrosPerMessage: median(perRound) };
}

/**
 * `12 345 (client CPU 50 µs/msg, 120 B/msg promoted, broker CPU 40 µs/msg)` for a contestant (the
 * bytes and the broker where measured).
 */
function rateAndCpu(result: ContestResult, name: string): string {
  const r = result[name];
  const promoted = r?.medianPromotedBytesPerMessage;
  const broker = r?.medianBrokerCpuMicrosPerMessage;
  return `${fmt(r?.medianPerSecond ?? 0)} (client CPU ${fmt(r?.medianCpuMicrosPerMessage ?? 0)} µs/msg${promoted === undefined ? '' : `, ${fmt(promoted)} B/msg promoted`}${broker === undefined ? '' : `, broker CPU ${fmt(broker)} µs/msg`})`;
}

export {
  baselineContestant,
  baselineRow,
  brokerFigures,
  childArgs,
  contest,
  PARKED_DELAY_MS,
  ratioOf,
  rateAndCpu,
  retryPath,
  runContestant,
  setUp,
  successPath,
};
export type { Contestant, ContestResult, Setup, ThroughputOptions };
