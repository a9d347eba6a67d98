/**
 * `npm run bench`: Boomerang's figures, each next to its anchor measured in the same run on the same
 * broker. Prints a markdown table on stdout (progress goes to stderr) and writes
 * bench-results/latest.json, plus bench-results/bench-rabbitmq-<x.y.z>.json: the last run on each broker
 * version, which is committed and which `npm run docs:figures` turns into the docs' tables. A run of some
 * sections replaces only those in it: the others stay as they were recorded, each with its own date. Ratios are what
 * count: this machine is shared and noisy.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { seedFromEnv } from '../helpers/seeded-random.js';
import { BenchBroker } from './bench-broker.js';
import { delayAccuracy } from './delay-accuracy.js';
import { memory } from './memory.js';
import { nativeSection } from './native.js';
import { machineInfo, markdownTable, type Row } from './report.js';
import { RESULTS_DIR, benchResultsFile } from './results-files.js';
import { type BenchFile, mergeBenchReports } from './results-merge.js';
import { processThroughput } from './process-throughput.js';
import { serverlessCost } from './serverless.js';
import { idempotencyPaths } from './idempotency-throughput.js';
import { retryPath, successPath } from './throughput.js';

const SECTIONS = ['success', 'retry', 'idempotency', 'delay', 'serverless', 'memory', 'native', 'process'] as const;
type Section = (typeof SECTIONS)[number];

const USAGE = `Usage: npm run bench [-- options]

Runs the benchmark sections against the broker in AMQP_URL (default amqp://guest:***@127.0.0.1:5672)
and prints a markdown table; the full results go to bench-results/latest.json and to
bench-results/bench-rabbitmq-<version>.json (the docs' figures: then run npm run docs:figures), where
the sections run replace their earlier figures and the others are kept.

  --section <name>       run only this section (repeatable, or comma-separated):
                         ${SECTIONS.join(', ')} (default: all; about 15 minutes);
                         native needs RabbitMQ 4.3+ (on older brokers its rows say why not);
                         process: the whole process through the package's CLI against hand-written
                         client processes, classic and quorum, spawn to exit (about 8 minutes;
                         its native rows need 4.3+)
  --messages <n>         messages per throughput run (default 20000)
  --rounds <n>           throughput rounds; the order rotates, medians count (default 5)
  --queue-type <t>       quorum or classic, for the throughput queues (default quorum)
  --delay-messages <n>   messages per delay mode (default 1000)
  --delay-max-s <n>      longest random delay, in seconds (default 30; the shortest is 1)
  --seed <n>             seed of the random delays (default: BENCH_SEED, else random; printed)
  --memory-sizes <list>  messages per memory run, comma-separated (default 10000,50000)
  --cold-starts <n>      fresh processes per bundle for the cold start (default 5)
  --tracing              success and retry: also run Boomerang with TRACING=opentelemetry (a provider,
                         a batch span processor, an exporter that drops), beside tracing off
  --baseline <dir>       success, retry, native and idempotency's I/O contest: also run the Boomerang bundle of another checkout
                         (<dir>/dist/bench/boomerang/index.mjs, left there by its own npm run bench) in
                         the same rounds, with a row against it: a before-and-after without the drift
                         between two runs
  --out <file>           where the JSON goes (default bench-results/latest.json); with --out,
                         no per-broker file is written
  -h, --help             this text

With BENCH_CPU_PROF_DIR=<dir>, each throughput contestant's process (success, retry, native) writes a
V8 CPU profile into <dir> (<who>-<mode>-<n>.cpuprofile), to see where its client CPU goes.`;

function fail(message: string): never {
  process.stderr.write(`error: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1) fail(`--${name} must be a whole number ≥ 1; got ${JSON.stringify(value)}`);
  return Number(value);
}

function readArgs() {
  try {
    return parseArgs({
      options: {
        section: { type: 'string', multiple: true },
        messages: { type: 'string' },
        rounds: { type: 'string' },
        'queue-type': { type: 'string' },
        'delay-messages': { type: 'string' },
        'delay-max-s': { type: 'string' },
        seed: { type: 'string' },
        'memory-sizes': { type: 'string' },
        'cold-starts': { type: 'string' },
        out: { type: 'string' },
        tracing: { type: 'boolean' },
        baseline: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    });
  } catch (error) {
    fail((error as Error).message);
  }
}

/** The bench bundle in the checkout `dir`; fails naming the file and how to make it. */
function baselineBundle(dir: string): string {
  const bundle = resolve(dir, 'dist/bench/boomerang/index.mjs');
  if (!existsSync(bundle)) fail(`--baseline: ${bundle} does not exist; run npm ci && npm run bench -- --section success --rounds 1 in ${dir} first`);
  return bundle;
}

function parse() {
  const v = readArgs().values;
  if (v.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const sections = (v.section ?? [...SECTIONS]).flatMap((s) => s.split(',')).map((s) => s.trim());
  for (const s of sections)
    if (!(SECTIONS as readonly string[]).includes(s)) fail(`unknown section ${JSON.stringify(s)}; expected one of ${SECTIONS.join(', ')}`);
  const queueType = v['queue-type'] ?? 'quorum';
  if (queueType !== 'quorum' && queueType !== 'classic') fail(`--queue-type must be quorum or classic; got ${JSON.stringify(queueType)}`);
  const memorySizes = (v['memory-sizes'] ?? '10000,50000').split(',').map((s) => positiveInt('memory-sizes', s.trim(), 0));
  return {
    sections: new Set(sections as Section[]),
    messages: positiveInt('messages', v.messages, 20_000),
    rounds: positiveInt('rounds', v.rounds, 5),
    queueType: queueType as 'quorum' | 'classic',
    delayMessages: positiveInt('delay-messages', v['delay-messages'], 1000),
    delayMaxMs: positiveInt('delay-max-s', v['delay-max-s'], 30) * 1000,
    seed: v.seed === undefined ? seedFromEnv('BENCH_SEED') : positiveInt('seed', v.seed, 0),
    memorySizes,
    coldStarts: positiveInt('cold-starts', v['cold-starts'], 5),
    tracing: v.tracing ?? false,
    baseline: v.baseline === undefined ? undefined : baselineBundle(v.baseline),
    out: v.out ?? join(RESULTS_DIR, 'latest.json'),
    // A run written elsewhere on purpose, or one measuring another commit beside this one, is not the docs' run.
    keepForDocs: v.out === undefined && v.baseline === undefined,
  };
}

async function main(): Promise<void> {
  const options = parse();
  const url = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  const broker = await BenchBroker.open(url.split(',')[0] as string);
  const startedAt = new Date();
  const rows: Row[] = [];
  const results: Record<string, unknown> = {};
  const durations: Record<string, number> = {};
  const timed = async <T extends { rows: Row[]; result: unknown }>(name: Section, run: () => Promise<T>): Promise<void> => {
    if (!options.sections.has(name)) return;
    progress(`== ${name}`);
    const t0 = Date.now();
    try {
      const { rows: sectionRows, result } = await run();
      rows.push(...sectionRows.map((row) => ({ ...row, benchSection: name })));
      results[name] = result;
    } catch (error) {
      progress(`  ${name} failed: ${(error as Error).stack ?? String(error)}`);
      rows.push({
        section: name,
        benchSection: name,
        metric: 'the section failed',
        boomerang: (error as Error).message.slice(0, 200),
        anchor: '-',
        ratio: '-',
        target: '-',
        verdict: 'not measured',
      });
      results[name] = { error: (error as Error).message };
    }
    durations[name] = Date.now() - t0;
  };
  const throughput = {
    broker,
    messages: options.messages,
    rounds: options.rounds,
    queueType: options.queueType,
    progress,
    tracing: options.tracing,
    baseline: options.baseline,
  };
  try {
    await timed('success', () => successPath(throughput));
    await timed('retry', () => retryPath(throughput));
    await timed('idempotency', () => idempotencyPaths(throughput));
    await timed('delay', () => {
      progress(`  seed ${options.seed} (rerun with --seed ${options.seed})`);
      return delayAccuracy({ broker, messages: options.delayMessages, minMs: 1000, maxMs: options.delayMaxMs, seed: options.seed, progress });
    });
    await timed('serverless', () => serverlessCost({ broker, runs: options.coldStarts, progress }));
    await timed('memory', () => memory({ broker, sizes: options.memorySizes, modes: ['success', 'retry'], progress }));
    await timed('native', () =>
      nativeSection({
        ...throughput,
        delayMessages: options.delayMessages,
        delayMaxMs: options.delayMaxMs,
        seed: options.seed,
        coldStarts: options.coldStarts,
      }),
    );
    await timed('process', () => processThroughput({ broker, messages: options.messages, rounds: options.rounds, progress }));
  } finally {
    await broker.close();
  }
  const machine = machineInfo(broker.serverVersion);
  const report = {
    startedAt: startedAt.toISOString(),
    machine,
    options: { ...options, sections: [...options.sections] },
    durationsMs: durations,
    rows,
    results,
  };
  const json = `${JSON.stringify(report, null, 2)}\n`;
  mkdirSync(join(options.out, '..'), { recursive: true });
  writeFileSync(options.out, json);
  const written = [options.out];
  if (options.keepForDocs) {
    const file = benchResultsFile(machine.rabbitmq);
    const previous = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as BenchFile) : undefined;
    written.push(file);
    writeFileSync(file, `${JSON.stringify(mergeBenchReports(previous, report, SECTIONS), null, 2)}\n`);
  }
  const header = `Boomerang bench, ${startedAt.toISOString().slice(0, 10)}: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB RAM, Node ${machine.node}, ${machine.rabbitmq} (local, shared)`;
  process.stdout.write(`${header}\n\n${markdownTable(rows)}\n\nFull results: ${written.join(' and ')}\n`);
  process.exitCode = rows.some((r) => r.verdict === 'not measured' && r.metric === 'the section failed') ? 1 : 0;
}

await main();
