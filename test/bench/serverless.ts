/**
 * Serverless cost: each Lambda bundle's size, and the time from `import()` of the bundle in a fresh
 * process to its first handled message. The handler in the bundles is the webhook delivery, so the
 * "partner" is a local HTTP server: the message is handled when its request arrives there. The pull
 * bundle connects, consumes its work queue and calls the handler; the event bundle is invoked with an
 * `aws:rmq` event of one message (it connects to the broker first, for the copies it may publish).
 */
import { readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { functionEnvironment } from '../../shared/cdk/function-environment.js';
import { topologyOptionsFromConfig } from '../../shared/config/config.js';
import { loadDeclaredQueues, pickQueue } from '../../shared/queues/declared-queues.js';
import { applyTopology } from '../../shared/topology/apply.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import { REPO_ROOT } from '../helpers/invoke-child.js';
import type { BenchBroker } from './bench-broker.js';
import { ANCHOR_BUNDLE, BUNDLES, ensureBundles } from './bundles.js';
import { publishOne, timeColdStart } from './cold-start.js';
import { type BundlingChoice, bundlingChoice } from './bundling-choice.js';
import { fmt, pct, type Row } from './report.js';
import { median } from './stats.js';

type ServerlessOptions = { readonly broker: BenchBroker; readonly runs: number; readonly progress: (line: string) => void };

type BundleResult = {
  readonly bundle: string;
  readonly bytes?: number;
  readonly gzipBytes?: number;
  readonly firstHandledMs?: number[];
  readonly importMs?: number[];
  /** The hand-written amqplib consumer doing the same first message (pull only). */
  readonly anchorFirstHandledMs?: number[];
  readonly anchorImportMs?: number[];
  readonly note?: string;
};

/**
 * Importing the bundle and handling the first message: at most this many times the hand-written
 * consumer, for pull and event alike (issue 32: what is above a bare amqplib consumer is the product,
 * the Powertools logger and metrics, the option checks and the pause read; Lambda's own init is several
 * times larger). The event bundle has no consumer of its own to compare with: it is measured against
 * the pull row's anchor, from the same run.
 */
const COLD_START_TARGET_RATIO = 1.4;

/**
 * Run as Lambda runs a deployed function: the node options and Powertools variables the stack sets,
 * and AWS_LAMBDA_FUNCTION_NAME, which makes the function log and write metrics with Powertools. Both
 * children (the bundle and the anchor) get the same environment; the anchor reads none of it.
 */
function coldStartEnv(url: string): Record<string, string> {
  const deployed = functionEnvironment({ virtualHost: '/', secretArn: 'bench', brokerHost: 'bench', functionName: 'boomerang-webhooks' }, {});
  return {
    AMQP_URL: url,
    IDLE_TIMEOUT_MS: '100',
    LOG_LEVEL: 'silent',
    NODE_OPTIONS: deployed.NODE_OPTIONS ?? '',
    AWS_LAMBDA_FUNCTION_NAME: 'boomerang-webhooks',
    POWERTOOLS_SERVICE_NAME: deployed.POWERTOOLS_SERVICE_NAME ?? '',
    POWERTOOLS_METRICS_NAMESPACE: deployed.POWERTOOLS_METRICS_NAMESPACE ?? '',
  };
}

/** A local partner that answers 200 and notes when each request arrived (wall clock, ms). */
async function startPartner(): Promise<{ server: Server; url: string; arrivals: number[] }> {
  const arrivals: number[] = [];
  const server = createServer((request, response) => {
    arrivals.push(performance.timeOrigin + performance.now());
    request.resume();
    request.on('end', () => response.writeHead(200).end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`, arrivals };
}

async function serverlessCost(options: ServerlessOptions): Promise<{ result: Record<string, BundleResult | BundlingChoice>; rows: Row[] }> {
  const missing = await ensureBundles(options.progress);
  if (missing) {
    const result = Object.fromEntries(Object.entries(BUNDLES).map(([name, bundle]) => [name, { bundle, note: missing }]));
    return { result, rows: Object.keys(BUNDLES).map((name) => notMeasured(name, missing)) };
  }
  const partner = await startPartner();
  // The real webhooks bundles consume the work queue functions/webhooks.ts names: the bench uses it, empty.
  const webhooks = pickQueue(await loadDeclaredQueues(), 'webhooks');
  const env = coldStartEnv(options.broker.url);
  const config = webhooks.loadConfig(env);
  const plan = buildTopologyPlan(topologyOptionsFromConfig(config));
  await applyTopology(options.broker.connection, plan);
  const waiting = await options.broker.connection.createChannel().then(async (c) => {
    const { messageCount } = await c.checkQueue(config.workQueue);
    await c.close();
    return messageCount;
  });
  if (waiting > 0) {
    partner.server.close();
    const note = `not measured: ${config.workQueue} holds ${waiting} messages that the cold starts would consume`;
    return {
      result: Object.fromEntries(Object.entries(BUNDLES).map(([name, bundle]) => [name, { bundle, note }])),
      rows: Object.keys(BUNDLES).map((name) => notMeasured(name, note)),
    };
  }
  const result: Record<string, BundleResult | BundlingChoice> = {};
  const rows: Row[] = [];
  try {
    for (const [name, bundle] of Object.entries(BUNDLES) as ['pull' | 'event', string][]) {
      const content = readFileSync(bundle);
      const firstHandledMs: number[] = [];
      const importMs: number[] = [];
      const anchorFirstHandledMs: number[] = [];
      const anchorImportMs: number[] = [];
      for (let run = 0; run < options.runs; run++) {
        const body = JSON.stringify({ url: partner.url, body: { run } });
        let childEnv: Record<string, string> = env;
        if (name === 'pull') await publishOne(options.broker, config.workQueue, body, `cold-${run}`);
        else childEnv = { ...env, BENCH_EVENT: JSON.stringify(rmqEvent(config.workQueue, body, run)) };
        const cold = await timeColdStart([join(REPO_ROOT, 'test/bench/cold-start-child.mjs'), bundle, name], childEnv, partner, `${name} bundle`);
        firstHandledMs.push(cold.firstHandledMs);
        importMs.push(cold.importMs);
        if (name !== 'pull') continue;
        // The anchor, right after, on the same queue and partner.
        await publishOne(options.broker, config.workQueue, body, `cold-anchor-${run}`);
        const anchor = await timeColdStart(
          [join(REPO_ROOT, 'test/bench/cold-start-anchor.mjs'), ANCHOR_BUNDLE, config.workQueue],
          env,
          partner,
          'cold-start anchor',
        );
        anchorFirstHandledMs.push(anchor.firstHandledMs);
        anchorImportMs.push(anchor.importMs);
      }
      result[name] = {
        bundle,
        bytes: statSync(bundle).size,
        gzipBytes: gzipSync(content).length,
        firstHandledMs,
        importMs,
        ...(name === 'pull' ? { anchorFirstHandledMs, anchorImportMs } : {}),
      };
      options.progress(
        `  ${name}: ${fmt(statSync(bundle).size / 1000, 1)} kB, first handled message after ${fmt(median(firstHandledMs))} ms (median of ${options.runs})`,
      );
    }
    // Why the construct bundles itself: its bundle against NodejsFunction's, on the same queue and partner.
    const choice = await bundlingChoice({ ...options, workQueue: config.workQueue, env, partner });
    result.bundling = choice.result;
    rows.push(...choice.rows);
  } finally {
    partner.server.close();
    // The declared queue's topology stays (npm run topology -- apply makes the same); its messages are all handled.
  }
  return { result, rows: [...rowsFor(result), ...rows] };
}

/** An `aws:rmq` event holding one webhook message for `queue` (properties the publisher did not set are null). */
function rmqEvent(queue: string, body: string, run: number): unknown {
  const nulls = {
    contentEncoding: null,
    headers: null,
    priority: null,
    correlationId: null,
    replyTo: null,
    expiration: null,
    timestamp: null,
    type: null,
    userId: null,
    appId: null,
    clusterId: null,
  };
  return {
    eventSource: 'aws:rmq',
    eventSourceArn: 'arn:aws:mq:eu-west-1:123456789012:broker:bench:b-0000',
    rmqMessagesByQueue: {
      [`${queue}::/`]: [
        {
          basicProperties: { ...nulls, contentType: 'application/json', deliveryMode: 2, messageId: `cold-event-${run}`, bodySize: Buffer.byteLength(body) },
          redelivered: false,
          data: Buffer.from(body).toString('base64'),
        },
      ],
    },
  };
}

function notMeasured(name: string, note: string): Row {
  return { section: 'serverless cost', metric: `${name} bundle`, boomerang: note, anchor: '-', ratio: '-', target: '-', verdict: 'not measured' };
}

function rowsFor(result: Record<string, BundleResult | BundlingChoice>): Row[] {
  const rows: Row[] = [];
  const pullAnchor = (result.pull as BundleResult | undefined)?.anchorFirstHandledMs;
  for (const [name, r] of Object.entries(result) as [string, BundleResult][]) {
    if (name === 'bundling') continue;
    if (r.bytes === undefined || r.firstHandledMs === undefined || r.importMs === undefined) {
      rows.push(notMeasured(name, r.note ?? 'not measured'));
      continue;
    }
    rows.push({
      section: 'serverless cost',
      metric: `${name} bundle size (dist/webhooks-${name}/index.mjs, minified, without its map)`,
      boomerang: `${fmt(r.bytes / 1000, 1)} kB (${fmt((r.gzipBytes ?? 0) / 1000, 1)} kB gzipped)`,
      anchor: '-',
      ratio: '-',
      // No size limit: a bundle is judged by its cold start, the row below.
      target: '-',
      verdict: 'info',
    });
    const first = median(r.firstHandledMs);
    const anchors = r.anchorFirstHandledMs ?? pullAnchor;
    const anchor = anchors && anchors.length > 0 ? median(anchors) : undefined;
    const whose = r.anchorFirstHandledMs === undefined ? "the pull row's anchor: " : '';
    const anchorImport = r.anchorImportMs && r.anchorImportMs.length > 0 ? `; import alone ${fmt(median(r.anchorImportMs))} ms` : '';
    rows.push({
      section: 'serverless cost',
      metric: `${name}: import() of the bundle in a fresh node process → first handled message (median of ${r.firstHandledMs.length})`,
      boomerang: `${fmt(first)} ms (import alone ${fmt(median(r.importMs))} ms; range ${fmt(Math.min(...r.firstHandledMs))}-${fmt(Math.max(...r.firstHandledMs))} ms)`,
      anchor:
        anchor === undefined
          ? '-'
          : `${fmt(anchor)} ms (${whose}hand-written amqplib consumer, same handler, bundled alike: import, connect, consume, handle, ack${anchorImport})`,
      ratio: anchor === undefined ? '-' : pct(first / anchor),
      target: `≤ ${pct(COLD_START_TARGET_RATIO)} of the anchor`,
      verdict: anchor === undefined ? 'not measured' : first / anchor <= COLD_START_TARGET_RATIO ? 'meets' : 'misses',
    });
  }
  return rows;
}

export { coldStartEnv, serverlessCost, startPartner };
export type { BundleResult };
