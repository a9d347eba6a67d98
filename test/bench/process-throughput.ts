/**
 * Throughput as a team measures it: the whole process, from spawn to exit. Boomerang runs as the
 * package's own CLI (`node dist/package/shared/cli/boomerang.js invoke pull --handler <file>.ts`, the
 * `boomerang` a team runs from node_modules/.bin, tsx's loader included for the TypeScript handler);
 * each anchor runs as its own hand-written client process (contestant-child.mjs: raw amqplib, raw
 * rhea, and rhea doing what native mode does on purpose). A run of 1 message is subtracted from a run of N, so that what every process pays once (node's
 * start, the imports, the connection, the close) cancels out and what is left is the per-message
 * work: rate = (N - 1) / (time of N - time of 1). Client CPU is the process's own user + system time,
 * read by the shell that ran it (`times`), subtracted the same way.
 *
 * Every path runs on classic and quorum queues (native: a quorum queue on RabbitMQ 4.3+), contestants
 * alternating round by round, medians of the per-round figures. The bundle contest (throughput.ts)
 * stays beside it: it times the invocation alone inside a prebuilt bundle, which is what Lambda runs.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { nativeBrokerRefusal } from '../../shared/topology/native-broker.js';
import { REPO_ROOT } from '../helpers/invoke-child.js';
import { fmt, pct, type Row } from './report.js';
import { brokerVersion } from './results-files.js';
import { median } from './stats.js';
import { nativeSetUp } from './native-throughput.js';
import { brokerCpu, duringWork } from './broker-cpu.js';
import { brokerFigures, childArgs, type ContestResult, ratioOf, rateAndCpu, type Setup, setUp, type ThroughputOptions } from './throughput.js';

type ProcessOptions = Pick<ThroughputOptions, 'broker' | 'messages' | 'rounds' | 'progress'>;

type Path = 'success' | 'retry' | 'native success' | 'native retry';
type QueueType = 'classic' | 'quorum';
type Who = 'boomerang' | 'raw' | 'rhea' | 'rhea-checked';

/** One spawn-to-exit run: wall time and the process's CPU, both in ms. */
type ProcessRun = { readonly wallMs: number; readonly cpuMs: number; readonly brokerCpuMs?: number | undefined };

const CLI = join(REPO_ROOT, 'dist/package/shared/cli/boomerang.js');
const HANDLERS = { success: join(REPO_ROOT, 'test/bench/handlers/noop.ts'), retry: join(REPO_ROOT, 'test/bench/handlers/fail.ts') } as const;
const CHILD = join(REPO_ROOT, 'test/bench/contestant-child.mjs');
const CONTESTANT_NAMES: Record<Who, string> = { boomerang: 'boomerang CLI', raw: 'raw amqplib', rhea: 'raw rhea', 'rhea-checked': 'raw rhea, checked' };

let built: boolean | undefined;

/** Compiles the package once per bench run (the sources may have changed since dist/package was made). */
function ensurePackage(progress: (line: string) => void): void {
  if (built !== undefined) return;
  progress('  building the package into dist/package (npm run build:package)');
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'infra/build-package.ts')], { cwd: REPO_ROOT, encoding: 'utf8' });
  built = result.status === 0 && existsSync(CLI);
  if (!built) throw new Error(`npm run build:package failed: ${(result.stderr || result.stdout).slice(-400)}`);
}

/**
 * Runs `argv` under a shell that reports the CPU its child used (`times`, on file descriptor 3) and
 * resolves with the wall time from spawn to exit, the CPU time and what it printed on stdout.
 */
function runTimed(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<ProcessRun & { readonly stdout: string }> {
  const script = '"$@"; code=$?; times >&3; exit $code';
  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    const child = spawn('bash', ['-c', script, 'bash', ...argv], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let times = '';
    child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (c: Buffer) => (times += c.toString()));
    child.on('close', (code) => {
      const wallMs = performance.now() - startedAt;
      if (code !== 0) return reject(new Error(`${argv.slice(1, 4).join(' ')} exited ${code}: ${stderr.slice(-600)}`));
      // `times` prints the shell's own user and system time, then its children's: `0m1.234s 0m0.056s`.
      const children = times.trim().split('\n')[1] ?? '';
      const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
      if (seconds.length !== 2) return reject(new Error(`could not read the CPU time from ${JSON.stringify(times)}`));
      resolve({ wallMs, cpuMs: ((seconds[0] ?? 0) + (seconds[1] ?? 0)) * 1000, stdout });
    });
  });
}

/** One run of `who` over `messages` messages already in the queue, checked for what it settled. */
async function runOnce(who: Who, path: Path, setup: Setup, options: ProcessOptions, messages: number): Promise<ProcessRun> {
  const retry = path.endsWith('retry');
  if (who === 'boomerang') {
    const env = { ...process.env, ...setup.env, MAX_MESSAGES: String(messages) };
    const argv = [process.execPath, CLI, 'invoke', 'pull', '--handler', retry ? HANDLERS.retry : HANDLERS.success, '--work-queue', setup.config.workQueue];
    const run = await runTimed([...argv, '--budget-ms', '600000'], env);
    const summary = JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as { acked?: number; retried?: number };
    const settled = retry ? summary.retried : summary.acked;
    if (settled !== messages) throw new Error(`boomerang CLI settled ${settled} of ${messages}: ${run.stdout.slice(-400)}`);
    return run;
  }
  return runTimed([process.execPath, CHILD, childArgs({ who, mode: retry ? 'retry' : 'success', setup }, options.broker.url, messages)], process.env);
}

/** Empties what a run left where it should be (the copies, or the delayed messages) and checks there are `messages`. */
async function collect(options: ProcessOptions, path: Path, setup: Setup, messages: number): Promise<void> {
  const left = await options.broker.count(setup.config.workQueue);
  if (path === 'success' || path === 'native success') {
    if (left !== 0) throw new Error(`${left} messages left in ${setup.config.workQueue}`);
    return;
  }
  // Copies wait in the delay queue; native retries are held (delayed) in the work queue itself.
  const held =
    Math.max(0, await options.broker.purge(setup.delayQueue)) + (path === 'native retry' ? Math.max(0, await options.broker.purge(setup.config.workQueue)) : 0);
  if (held !== messages) throw new Error(`expected ${messages} messages held for a retry, found ${held}`);
}

/** The contest of one path on one queue type: each round, every contestant runs N, then 1. */
async function cell(options: ProcessOptions, path: Path, queueType: QueueType, contestants: readonly Who[]): Promise<ContestResult> {
  const native = path.startsWith('native');
  const setup = native
    ? await nativeSetUp({ ...options, queueType: 'quorum' })
    : await setUp({ ...options, queueType }, path === 'success' ? 'success' : 'retry');
  const rates = new Map<Who, number[]>(contestants.map((c) => [c, []]));
  const cpu = new Map<Who, number[]>(contestants.map((c) => [c, []]));
  const brokerMicros = new Map<Who, number[]>(contestants.map((c) => [c, []]));
  const readBroker = brokerCpu(options.broker.url);
  try {
    for (let round = 0; round < options.rounds; round++) {
      const order = contestants.map((_, i) => contestants[(i + round) % contestants.length] as Who);
      for (const who of order) {
        const runs: ProcessRun[] = [];
        for (const n of [options.messages, 1]) {
          await options.broker.preload(setup.config.workQueue, n);
          const [run, brokerCpuMs] = await duringWork(readBroker, () => runOnce(who, path, setup, options, n));
          runs.push({ ...run, brokerCpuMs });
          await collect(options, path, setup, n);
        }
        const [many, one] = runs as [ProcessRun, ProcessRun];
        const perMessage = options.messages - 1;
        const rate = (perMessage / Math.max(1, many.wallMs - one.wallMs)) * 1000;
        const cpuMicros = ((many.cpuMs - one.cpuMs) * 1000) / perMessage;
        const brokerMicrosOfRound =
          many.brokerCpuMs === undefined || one.brokerCpuMs === undefined ? undefined : ((many.brokerCpuMs - one.brokerCpuMs) * 1000) / perMessage;
        rates.get(who)?.push(rate);
        cpu.get(who)?.push(cpuMicros);
        if (brokerMicrosOfRound !== undefined) brokerMicros.get(who)?.push(brokerMicrosOfRound);
        options.progress(
          `  ${path}, ${queueType}, round ${round + 1}/${options.rounds} ${CONTESTANT_NAMES[who]}: ${fmt(rate)} msg/s (${fmt(many.wallMs)} ms for ${fmt(options.messages)}, ${fmt(one.wallMs)} ms for 1), client CPU ${fmt(cpuMicros)} µs/msg${brokerMicrosOfRound === undefined ? '' : `, broker CPU ${fmt(brokerMicrosOfRound)} µs/msg`}`,
        );
      }
    }
  } finally {
    for (const name of setup.names) await options.broker.deleteQueue(name);
    for (const name of setup.exchanges) await options.broker.deleteExchange(name);
  }
  return Object.fromEntries(
    contestants.map((who) => {
      const r = rates.get(who) ?? [];
      const c = cpu.get(who) ?? [];
      return [
        CONTESTANT_NAMES[who],
        {
          ratesPerSecond: r,
          medianPerSecond: median(r),
          cpuMicrosPerMessage: c,
          medianCpuMicrosPerMessage: median(c),
          ...brokerFigures(brokerMicros.get(who) ?? []),
        },
      ];
    }),
  );
}

/** What each path is compared with, and the target where there is one (issue 32). */
const COMPARISONS: Record<Path, readonly { readonly anchor: Who; readonly what: string; readonly target?: readonly [string, number] }[]> = {
  success: [{ anchor: 'raw', what: 'raw amqplib process: consume, prefetch 100, no-op handler, ack each', target: ['≥ 120 % of raw', 1.2] }],
  retry: [
    { anchor: 'raw', what: 'raw amqplib process: consume, prefetch 100, handler throws, publish copy + streamed confirm, ack', target: ['≥ 90 % of raw', 0.9] },
  ],
  'native success': [
    { anchor: 'rhea', what: 'raw rhea process: credit 100 given back a quarter at a time, accept each', target: ['≥ 90 % of raw rhea', 0.9] },
    { anchor: 'raw', what: 'raw amqplib process: consume, prefetch 100, ack each (0-9-1)' },
    { anchor: 'rhea-checked', what: 'raw rhea process as above, after one GET /queues/<work queue> through the management API' },
  ],
  'native retry': [
    {
      anchor: 'raw',
      what: 'raw amqplib process: consume, handler throws, copy to a TTL delay queue + streamed confirm, ack',
      target: ['≥ 100 % of raw amqplib', 1],
    },
    { anchor: 'rhea', what: 'raw rhea process: `modified` with its own x-opt-delivery-time + 1 annotation', target: ['≥ 90 % of raw rhea', 0.9] },
    {
      anchor: 'rhea-checked',
      what: 'raw rhea process as above, after one GET /queues/<work queue> through the management API, writing the failure record Boomerang writes (8 annotations)',
    },
  ],
};

function rowsOf(options: ProcessOptions, path: Path, queueType: QueueType, result: ContestResult): Row[] {
  const shape = `whole process, spawn to exit, ${fmt(options.messages)} minus 1 message × 1 KiB, ${queueType}, prefetch 100; msg/s, median of ${options.rounds} rounds, ratio = median of per-round ratios`;
  const who = CONTESTANT_NAMES.boomerang;
  return COMPARISONS[path].map(({ anchor, what, target }, i) => {
    const ratio = ratioOf(result, who, CONTESTANT_NAMES[anchor]);
    return {
      section: `whole process: ${path}`,
      metric: i === 0 ? `\`boomerang invoke pull\` (the package's CLI, TypeScript handler), ${shape}` : 'same rounds',
      boomerang: rateAndCpu(result, who),
      anchor: `${rateAndCpu(result, CONTESTANT_NAMES[anchor])}: ${what}`,
      ratio: pct(ratio),
      target: target?.[0] ?? 'comparison',
      verdict: target === undefined ? 'info' : ratio >= target[1] ? 'meets' : 'misses',
    };
  });
}

/**
 * The `process` section: success and retry on classic and quorum queues, and on RabbitMQ 4.3+ the
 * native paths on a quorum queue, each through the CLI against its hand-written anchors.
 */
async function processThroughput(options: ProcessOptions): Promise<{ result: Record<string, ContestResult | string>; rows: Row[] }> {
  ensurePackage(options.progress);
  const cells: Array<[Path, QueueType, readonly Who[]]> = [
    ['success', 'classic', ['boomerang', 'raw']],
    ['success', 'quorum', ['boomerang', 'raw']],
    ['retry', 'classic', ['boomerang', 'raw']],
    ['retry', 'quorum', ['boomerang', 'raw']],
  ];
  const refusal = nativeBrokerRefusal(brokerVersion(options.broker.serverVersion));
  // rhea-checked does what native mode does on purpose (contestant-child.mjs): not a target's anchor, a comparison.
  const native: readonly Who[] = ['boomerang', 'raw', 'rhea', 'rhea-checked'];
  if (refusal === undefined) cells.push(['native success', 'quorum', native], ['native retry', 'quorum', native]);
  const result: Record<string, ContestResult | string> = {};
  const rows: Row[] = [];
  for (const [path, queueType, contestants] of cells) {
    const r = await cell(options, path, queueType, contestants);
    result[`${path}, ${queueType}`] = r;
    rows.push(...rowsOf(options, path, queueType, r));
  }
  if (refusal !== undefined) {
    const why = `skipped: ${refusal.message.split(':')[0]}`;
    result.native = why;
    rows.push({
      section: 'whole process: native',
      metric: 'native success and retry',
      boomerang: why,
      anchor: '-',
      ratio: '-',
      target: '-',
      verdict: 'not measured',
    });
  }
  return { result, rows };
}

export { processThroughput };
