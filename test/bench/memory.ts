/**
 * Memory: the peak RSS of one invocation while it works through N messages, run as its own process
 * and measured two ways: the kernel's high-water mark (/proc/<pid>/status VmHWM, sampled every
 * 100 ms until the process exits) and the process's own getrusage maxRSS at exit. "Flat" means the
 * peak does not grow with N: the same invocation is measured at several N, in the success path (no-op
 * handler) and the retry path (every message copied to the delay path).
 * The invocation runs from the Lambda bundle (dist/pull/index.mjs) when it exists, as Lambda runs it;
 * otherwise through `invoke` under tsx, whose loader adds its own memory.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, topologyOptionsFromConfig } from '../../shared/config.js';
import { applyTopology } from '../../shared/topology/apply.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import { REPO_ROOT } from '../helpers/invoke-child.js';
import type { BenchBroker } from './bench-broker.js';
import { BUNDLES, ensureBundles } from './bundles.js';
import { fmt, type Row } from './report.js';

type MemoryOptions = {
  readonly broker: BenchBroker;
  readonly sizes: readonly number[];
  readonly modes: readonly ('success' | 'retry')[];
  readonly progress: (line: string) => void;
};

type MemoryRun = { readonly mode: 'success' | 'retry'; readonly messages: number; readonly vmHwmMiB: number; readonly maxRssMiB: number; readonly durationMs: number; readonly summary: unknown };

const PULL_BUNDLE = BUNDLES.pull;
const PEAK_TARGET_MIB = 150;

function vmHwmKb(pid: number): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

async function runOne(options: MemoryOptions, mode: 'success' | 'retry', messages: number, runner: 'bundle' | 'tsx'): Promise<MemoryRun> {
  const config = loadConfig({ AMQP_URL: options.broker.url, WORK_QUEUE: `bench-mem-${randomUUID().slice(0, 8)}`, MAX_RETRIES: '1', BACKOFF_INITIAL_MS: '600000', BACKOFF_JITTER: '0' });
  const plan = buildTopologyPlan(topologyOptionsFromConfig(config));
  await applyTopology(options.broker.connection, plan);
  try {
    await options.broker.preload(config.workQueue, messages);
    const env = {
      ...process.env,
      AMQP_URL: options.broker.url,
      WORK_QUEUE: config.workQueue,
      MAX_RETRIES: '1',
      BACKOFF_INITIAL_MS: '600000',
      BACKOFF_JITTER: '0',
      MAX_MESSAGES: String(messages + 1),
      BREAKER_THRESHOLD: '0',
      LOG_LEVEL: 'error',
    };
    const args =
      runner === 'bundle'
        ? [join(REPO_ROOT, 'test/bench/memory-child.mjs'), PULL_BUNDLE, mode]
        : ['--import', 'tsx', 'shared/cli/invoke.ts', 'pull', '--handler', `test/bench/handlers/${mode === 'retry' ? 'fail' : 'noop'}.ts`, '--queue', config.workQueue, '--budget-ms', '600000'];
    const startedAt = Date.now();
    const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    let peakKb = 0;
    const sampler = setInterval(() => {
      peakKb = Math.max(peakKb, vmHwmKb(child.pid ?? -1) ?? 0);
    }, 100);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearInterval(sampler);
    const durationMs = Date.now() - startedAt;
    const last = out.trim().split('\n').pop() ?? '';
    if (code !== 0) throw new Error(`memory run (${mode}, ${messages}) exited ${code}: ${err.slice(-800)}`);
    let summary: unknown;
    let maxRssKb = Number(/BENCH_MAX_RSS_KB=(\d+)/.exec(err)?.[1] ?? 0);
    const parsed = JSON.parse(last) as { summary?: unknown; maxRssKb?: number };
    if (runner === 'bundle') {
      summary = parsed.summary;
      maxRssKb = parsed.maxRssKb ?? 0;
    } else {
      summary = parsed;
    }
    return { mode, messages, vmHwmMiB: peakKb / 1024, maxRssMiB: maxRssKb / 1024, durationMs, summary };
  } finally {
    for (const queue of plan.queues) await options.broker.deleteQueue(queue.name);
  }
}

async function memory(options: MemoryOptions): Promise<{ result: { runner: string; runs: MemoryRun[] }; rows: Row[] }> {
  ensureBundles(options.progress);
  const runner = existsSync(PULL_BUNDLE) ? 'bundle' : 'tsx';
  const runs: MemoryRun[] = [];
  for (const mode of options.modes) {
    for (const messages of options.sizes) {
      const run = await runOne(options, mode, messages, runner);
      runs.push(run);
      options.progress(`  ${mode} ${fmt(messages)}: peak RSS ${fmt(run.maxRssMiB, 1)} MiB (VmHWM ${fmt(run.vmHwmMiB, 1)} MiB) in ${fmt(run.durationMs)} ms`);
    }
  }
  const rows: Row[] = [];
  for (const mode of options.modes) {
    const these = runs.filter((r) => r.mode === mode).sort((a, b) => a.messages - b.messages);
    const first = these[0];
    const last = these[these.length - 1];
    if (!first || !last) continue;
    const peak = (r: MemoryRun) => Math.max(r.maxRssMiB, r.vmHwmMiB);
    const growth = peak(last) - peak(first);
    const flat = growth <= Math.max(5, 0.1 * peak(first));
    rows.push({
      section: 'memory',
      metric: `peak RSS of one invocation, ${mode} path (${runner === 'bundle' ? 'dist/pull bundle' : 'invoke under tsx'}), by messages handled`,
      boomerang: these.map((r) => `${fmt(r.messages)}: ${fmt(peak(r), 1)} MiB`).join('; ') + ` (growth ${growth >= 0 ? '+' : ''}${fmt(growth, 1)} MiB)`,
      anchor: '-',
      ratio: '-',
      target: `flat, ≤ ${PEAK_TARGET_MIB} MiB`,
      verdict: flat && peak(last) <= PEAK_TARGET_MIB ? 'meets' : 'misses',
    });
  }
  return { result: { runner, runs }, rows };
}

export { memory };
export type { MemoryRun };
