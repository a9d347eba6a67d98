/**
 * The native bundle's cold start (RabbitMQ 4.3+): the time from `import()` of the bundle in a fresh
 * process to its first handled message, next to the serverless section's anchor (a hand-written amqplib
 * consumer with the same handler, bundled alike) on the same queue and partner, the order alternating
 * run by run. The bundle (test/bench/cold-start-native-entry.ts) loads rhea through a dynamic import
 * at the first native connection: the row says whether esbuild split it into a chunk of its own.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { topologyOptionsFromConfig } from '../../shared/config/config.js';
import { applyTopology } from '../../shared/topology/apply.js';
import { allExchanges, buildTopologyPlan } from '../../shared/topology/plan.js';
import { REPO_ROOT } from '../helpers/invoke-child.js';
import type { BenchBroker } from './bench-broker.js';
import { ANCHOR_BUNDLE, ensureBundles, NATIVE_BUNDLE } from './bundles.js';
import { queue } from './cold-start-native-entry.js';
import { fmt, pct, type Row } from './report.js';
import { runChild } from './cold-start.js';
import { coldStartEnv, startPartner } from './serverless.js';
import { median } from './stats.js';

/** The native bundle's cold start against the hand-written amqplib consumer: it loads rhea too (issue 32: was 130 %). */
const NATIVE_COLD_START_TARGET_RATIO = 1.5;

type NativeColdStart = {
  readonly bundle: string;
  readonly bytes: number;
  readonly gzipBytes: number;
  /** The chunk rhea went to, loaded at the first native connection (undefined: not split). */
  readonly nativeChunkBytes?: number;
  readonly firstHandledMs: number[];
  readonly importMs: number[];
  /** From the process's start to the broker connection's socket (its first client socket). */
  readonly socketMs: number[];
  readonly anchorFirstHandledMs: number[];
  readonly anchorImportMs: number[];
  readonly anchorSocketMs: number[];
};

/**
 * The chunk rhea went to, if esbuild split its dynamic import off (native/amqp10-attempt.ts): found by
 * a function of rhea's own (`write_dispositions`, lib/session.js), which no code of Boomerang's names.
 */
function nativeChunk(bundle: string): number | undefined {
  if (readFileSync(bundle, 'utf8').includes('write_dispositions')) return undefined;
  const dir = join(dirname(bundle), 'chunks');
  const found = readdirSync(dir)
    .filter((f) => f.endsWith('.mjs'))
    .find((f) => readFileSync(join(dir, f), 'utf8').includes('write_dispositions'));
  return found === undefined ? undefined : statSync(join(dir, found)).size;
}

async function nativeColdStart(options: {
  readonly broker: BenchBroker;
  readonly runs: number;
  readonly progress: (line: string) => void;
}): Promise<{ result: NativeColdStart; rows: Row[] }> {
  const missing = await ensureBundles(options.progress);
  if (missing) throw new Error(missing);
  const env = coldStartEnv(options.broker.url);
  const config = queue.loadConfig(env);
  const plan = buildTopologyPlan(topologyOptionsFromConfig(config));
  await applyTopology(options.broker.connection, plan);
  const partner = await startPartner();
  const publish = async (run: number, who: string): Promise<void> => {
    const channel = await options.broker.connection.createConfirmChannel();
    const body = JSON.stringify({ url: partner.url, body: { run } });
    channel.sendToQueue(config.workQueue, Buffer.from(body), { persistent: true, messageId: `cold-${who}-${run}`, contentType: 'application/json' });
    await channel.waitForConfirms();
    await channel.close();
  };
  const timed = async (run: number, who: 'native' | 'anchor'): Promise<{ first: number; imported: number; socket: number }> => {
    partner.arrivals.length = 0;
    await publish(run, who);
    const args =
      who === 'native' ? ['test/bench/cold-start-child.mjs', NATIVE_BUNDLE, 'pull'] : ['test/bench/cold-start-anchor.mjs', ANCHOR_BUNDLE, config.workQueue];
    const child = await runChild([join(REPO_ROOT, args[0] as string), ...args.slice(1)], env);
    const arrivedAt = partner.arrivals[0];
    if (child.error || arrivedAt === undefined) throw new Error(`${who} cold start: no handled message (${child.error ?? 'the partner got no request'})`);
    if (child.socketAt === undefined) throw new Error(`${who} cold start: the child saw no client socket made`);
    return { first: arrivedAt - child.startedAt, imported: child.importedAt - child.startedAt, socket: child.socketAt - child.startedAt };
  };
  const times = {
    native: { first: [] as number[], imported: [] as number[], socket: [] as number[] },
    anchor: { first: [] as number[], imported: [] as number[], socket: [] as number[] },
  };
  try {
    await options.broker.purge(config.workQueue);
    for (let run = 0; run < options.runs; run++) {
      for (const who of run % 2 === 0 ? (['native', 'anchor'] as const) : (['anchor', 'native'] as const)) {
        const { first, imported, socket } = await timed(run, who);
        times[who].first.push(first);
        times[who].imported.push(imported);
        times[who].socket.push(socket);
      }
    }
  } finally {
    partner.server.close();
    for (const q of plan.queues) await options.broker.deleteQueue(q.name);
    for (const x of allExchanges(plan)) await options.broker.deleteExchange(x.name);
  }
  const content = readFileSync(NATIVE_BUNDLE);
  const chunk = nativeChunk(NATIVE_BUNDLE);
  const result = {
    bundle: NATIVE_BUNDLE,
    bytes: content.length,
    gzipBytes: gzipSync(content).length,
    ...(chunk === undefined ? {} : { nativeChunkBytes: chunk }),
    firstHandledMs: times.native.first,
    importMs: times.native.imported,
    socketMs: times.native.socket,
    anchorFirstHandledMs: times.anchor.first,
    anchorImportMs: times.anchor.imported,
    anchorSocketMs: times.anchor.socket,
  };
  options.progress(
    `  native bundle: first handled message after ${fmt(median(times.native.first))} ms, anchor ${fmt(median(times.anchor.first))} ms (medians of ${options.runs})`,
  );
  return { result, rows: rowsFor(result) };
}

function rowsFor(r: NativeColdStart): Row[] {
  const first = median(r.firstHandledMs);
  const anchor = median(r.anchorFirstHandledMs);
  const split =
    r.nativeChunkBytes === undefined
      ? 'NOT split: rhea is in index.mjs'
      : `rhea in a chunk of ${fmt(r.nativeChunkBytes / 1000, 1)} kB loaded at the first native connection; the native engine's own code in index.mjs`;
  return [
    {
      section: 'native',
      metric: 'native pull bundle size (webhooks as a native queue, minified, without its map)',
      boomerang: `${fmt(r.bytes / 1000, 1)} kB (${fmt(r.gzipBytes / 1000, 1)} kB gzipped); ${split}`,
      anchor: '-',
      ratio: '-',
      target: '-',
      verdict: 'info',
    },
    {
      section: 'native',
      metric: `native: import() of the bundle in a fresh node process → first handled message, native chunk included (median of ${r.firstHandledMs.length}, order alternating)`,
      boomerang: `${fmt(first)} ms (import alone ${fmt(median(r.importMs))} ms; range ${fmt(Math.min(...r.firstHandledMs))}-${fmt(Math.max(...r.firstHandledMs))} ms)`,
      anchor: `${fmt(anchor)} ms (hand-written amqplib consumer, same handler, bundled alike, same queue: import, connect, consume, handle, ack)`,
      ratio: pct(first / anchor),
      target: `≤ ${pct(NATIVE_COLD_START_TARGET_RATIO)} of the anchor`,
      verdict: first / anchor <= NATIVE_COLD_START_TARGET_RATIO ? 'meets' : 'misses',
    },
    {
      section: 'native',
      metric: `native cold start by phase, same runs (medians): the import; its end → the broker connection's socket made; the socket → the first handled message`,
      boomerang: phases(r.importMs, r.socketMs, r.firstHandledMs),
      anchor: phases(r.anchorImportMs, r.anchorSocketMs, r.anchorFirstHandledMs),
      ratio: '-',
      target: '-',
      verdict: 'info',
    },
  ];
}

/** The three phases of one contestant's cold starts, each the median of its runs' own phase, in ms. */
function phases(importMs: readonly number[], socketMs: readonly number[], firstHandledMs: readonly number[]): string {
  const toSocket = socketMs.map((socket, i) => socket - (importMs[i] ?? Number.NaN));
  const toFirst = firstHandledMs.map((first, i) => first - (socketMs[i] ?? Number.NaN));
  return `${fmt(median(importMs))} / ${fmt(median(toSocket))} / ${fmt(median(toFirst))} ms`;
}

export { nativeColdStart };
export type { NativeColdStart };
