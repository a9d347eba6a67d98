/**
 * Memory: the peak RSS of one invocation while it works through N messages, run as its own process
 * and measured by the kernel's high-water mark (/proc/<pid>/status VmHWM, sampled every 100 ms and
 * read by the process itself at exit; getrusage maxRSS is kept for the record only, as on Linux it
 * also counts the parent's pages the forked process held before its exec), in the success path
 * (no-op handler) and the retry path (every message copied to the delay path), at several N.
 * "Flat" means the RSS stops growing while the invocation works on: in the largest run, the peak of
 * the second half of its time is within 5 % (at least 5 MiB) of the first half's. (Comparing the
 * peaks of a short and a long run instead mostly measures how far V8 had grown its young generation
 * when the short one ended: a 10 000-message retry run ends before the RSS levels off.)
 * The invocation runs from a bundle of the public entry point (dist/bench/boomerang/index.mjs, built like the Lambda bundles) when it exists, as Lambda runs it;
 * otherwise through `invoke` under tsx, whose loader adds its own memory.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, topologyOptionsFromConfig } from '../../shared/config/config.js';
import { applyTopology } from '../../shared/topology/apply.js';
import { buildTopologyPlan, markerExchanges } from '../../shared/topology/plan.js';
import { REPO_ROOT } from '../helpers/invoke-child.js';
import type { BenchBroker } from './bench-broker.js';
import { ensureBundles, LIBRARY_BUNDLE } from './bundles.js';
import { fmt, type Row } from './report.js';

type MemoryOptions = {
  readonly broker: BenchBroker;
  readonly sizes: readonly number[];
  readonly modes: readonly ('success' | 'retry')[];
  readonly progress: (line: string) => void;
};

type MemoryRun = {
  readonly mode: 'success' | 'retry';
  readonly messages: number;
  readonly vmHwmMiB: number;
  readonly maxRssMiB: number;
  readonly durationMs: number;
  /** The highest VmRSS sampled in the first and in the second half of the run's time. */
  readonly firstHalfPeakMiB: number;
  readonly secondHalfPeakMiB: number;
  readonly summary: unknown;
};

const PULL_BUNDLE = LIBRARY_BUNDLE;
const PEAK_TARGET_MIB = 150;

/** The process's peak (VmHWM) and current (VmRSS) resident size in KiB, while it runs. */
function residentKb(pid: number): { hwm: number; rss: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
    const rss = /VmRSS:\s+(\d+) kB/.exec(status);
    return hwm && rss ? { hwm: Number(hwm[1]), rss: Number(rss[1]) } : undefined;
  } catch {
    return undefined;
  }
}

async function runOne(options: MemoryOptions, mode: 'success' | 'retry', messages: number, runner: 'bundle' | 'tsx'): Promise<MemoryRun> {
  const config = loadConfig({
    AMQP_URL: options.broker.url,
    WORK_QUEUE: `bench-mem-${randomUUID().slice(0, 8)}`,
    MAX_RETRIES: '1',
    BACKOFF_INITIAL_MS: '600000',
    BACKOFF_JITTER: '0',
  });
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
        : [
            '--import',
            'tsx',
            'shared/cli/boomerang.ts',
            'invoke',
            'pull',
            '--handler',
            `test/bench/handlers/${mode === 'retry' ? 'fail' : 'noop'}.ts`,
            '--work-queue',
            config.workQueue,
            '--budget-ms',
            '600000',
          ];
    const startedAt = Date.now();
    const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    let peakKb = 0;
    const rssSamples: { at: number; kb: number }[] = [];
    const sampler = setInterval(() => {
      const resident = residentKb(child.pid ?? -1);
      if (!resident) return;
      peakKb = Math.max(peakKb, resident.hwm);
      rssSamples.push({ at: Date.now() - startedAt, kb: resident.rss });
    }, 100);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearInterval(sampler);
    const durationMs = Date.now() - startedAt;
    const last = out.trim().split('\n').pop() ?? '';
    if (code !== 0) throw new Error(`memory run (${mode}, ${messages}) exited ${code}: ${err.slice(-800)}`);
    let summary: unknown;
    let maxRssKb = Number(/BENCH_MAX_RSS_KB=(\d+)/.exec(err)?.[1] ?? 0);
    const parsed = JSON.parse(last) as { summary?: unknown; maxRssKb?: number; vmHwmKb?: number };
    if (runner === 'bundle') {
      summary = parsed.summary;
      maxRssKb = parsed.maxRssKb ?? 0;
      // Its own last word on its peak: the sampler may have looked last before it.
      peakKb = Math.max(peakKb, parsed.vmHwmKb ?? 0);
    } else {
      summary = parsed;
    }
    const half = durationMs / 2;
    const peakOf = (samples: { kb: number }[]): number => Math.max(0, ...samples.map((x) => x.kb)) / 1024;
    const firstHalfPeakMiB = peakOf(rssSamples.filter((x) => x.at < half));
    const secondHalfPeakMiB = peakOf(rssSamples.filter((x) => x.at >= half));
    return { mode, messages, vmHwmMiB: peakKb / 1024, maxRssMiB: maxRssKb / 1024, durationMs, firstHalfPeakMiB, secondHalfPeakMiB, summary };
  } finally {
    for (const queue of plan.queues) await options.broker.deleteQueue(queue.name);
    for (const exchange of markerExchanges(plan)) await options.broker.deleteExchange(exchange.name);
  }
}

async function memory(options: MemoryOptions): Promise<{ result: { runner: string; runs: MemoryRun[] }; rows: Row[] }> {
  await ensureBundles(options.progress);
  const runner = existsSync(PULL_BUNDLE) ? 'bundle' : 'tsx';
  const runs: MemoryRun[] = [];
  for (const mode of options.modes) {
    for (const messages of options.sizes) {
      const run = await runOne(options, mode, messages, runner);
      runs.push(run);
      options.progress(
        `  ${mode} ${fmt(messages)}: peak RSS (VmHWM) ${fmt(run.vmHwmMiB, 1)} MiB (getrusage maxRSS ${fmt(run.maxRssMiB, 1)} MiB; RSS peak ${fmt(run.firstHalfPeakMiB, 1)} MiB in the first half of the run, ${fmt(run.secondHalfPeakMiB, 1)} MiB in the second) in ${fmt(run.durationMs)} ms`,
      );
    }
  }
  const rows: Row[] = [];
  for (const mode of options.modes) {
    const these = runs.filter((r) => r.mode === mode).sort((a, b) => a.messages - b.messages);
    const first = these[0];
    const last = these[these.length - 1];
    if (!first || !last) continue;
    // VmHWM, not getrusage maxRSS: on Linux maxRSS carries across exec what the forked copy of the
    // parent held, so a bench process grown by an earlier section (dynalite) showed in every child.
    const peak = (r: MemoryRun) => r.vmHwmMiB;
    const growth = last.secondHalfPeakMiB - last.firstHalfPeakMiB;
    const flat = growth <= Math.max(5, 0.05 * last.firstHalfPeakMiB);
    rows.push({
      section: 'memory',
      metric: `peak RSS of one invocation, ${mode} path (${runner === 'bundle' ? 'dist/pull bundle' : 'invoke under tsx'}), by messages handled; flat = the ${fmt(last.messages)}-message run's RSS peak in the second half of its time vs the first`,
      boomerang:
        these.map((r) => `${fmt(r.messages)}: ${fmt(peak(r), 1)} MiB`).join('; ') +
        `; ${fmt(last.messages)}-message run, first half ${fmt(last.firstHalfPeakMiB, 1)} MiB, second half ${fmt(last.secondHalfPeakMiB, 1)} MiB (${growth >= 0 ? '+' : ''}${fmt(growth, 1)} MiB)`,
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
