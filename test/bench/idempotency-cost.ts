/**
 * What the idempotency guard costs per message, for each store, next to the same work unguarded:
 * `npx tsx test/bench/idempotency-cost.ts [runs]`. Runs are sequential (one message's latency, as a
 * handler sees it); the work itself is empty, so the figures are the guard's own overhead.
 * Redis is the local server; DynamoDB is dynalite in this process (a real table answers in a few ms
 * per call inside its region, slower than dynalite on loopback, so read those rows as a floor).
 * Paths: `first run` (a new key: in-progress write + completion write), `duplicate` (a completed key:
 * a refused write + a read), `failing run` (in-progress write + delete, then the error propagates).
 * Each figure is the median of 3 rounds; the order of the paths rotates between rounds. Keys live
 * 10 minutes (longer than a run of the bench), so the local Redis is clean soon after.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createIdempotencyGuard, type IdempotencyGuard, type IdempotencyGuardDeps } from '../../shared/idempotency/guard.js';
import type { IdempotencyStoreSpec } from '../../shared/idempotency/options.js';
import { createLogger } from '../../shared/observability/logger.js';
import { startDynalite } from '../helpers/dynalite.js';
import { message } from '../helpers/idempotency-stores.js';
import { median } from './stats.js';

const RUNS = Number(process.argv[2] ?? 1000);
const ROUNDS = 3;
const REMAINING_MS = 60_000;
const noop = async (): Promise<void> => undefined;
const failure = new Error('bench: failing handler');
const failing = async (): Promise<void> => {
  throw failure;
};

type Path = { readonly name: string; run(guard: IdempotencyGuard, round: number): Promise<void> };

const PATHS: readonly Path[] = [
  {
    name: 'unguarded',
    run: async () => {
      for (let i = 0; i < RUNS; i++) await noop();
    },
  },
  {
    name: 'first run',
    run: async (guard, round) => {
      for (let i = 0; i < RUNS; i++) await guard.run(message(`r${round}-${i}`), noop, REMAINING_MS);
    },
  },
  // Keys completed by this round's `first run`, or by a warm-up below when that comes later.
  {
    name: 'duplicate',
    run: async (guard) => {
      for (let i = 0; i < RUNS; i++) await guard.run(message(`dup-${i}`), noop, REMAINING_MS);
    },
  },
  {
    name: 'failing run',
    run: async (guard) => {
      for (let i = 0; i < RUNS; i++)
        await guard.run(message(`fail-${i}`), failing, REMAINING_MS).catch((error: unknown) => {
          if (error !== failure) throw error;
        });
    },
  },
];

async function measure(store: IdempotencyStoreSpec, deps: IdempotencyGuardDeps): Promise<Map<string, number>> {
  const guard = createIdempotencyGuard({ store, keyPrefix: `bench-${randomUUID()}`, ttlSeconds: 600 }, { ...deps, logger: createLogger({ level: 'error' }) });
  const samples = new Map<string, number[]>(PATHS.map((p) => [p.name, []]));
  try {
    for (let i = 0; i < RUNS; i++) await guard.run(message(`dup-${i}`), noop, REMAINING_MS);
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < PATHS.length; k++) {
        const path = PATHS[(k + round) % PATHS.length] as Path;
        const started = performance.now();
        await path.run(guard, round);
        samples.get(path.name)?.push(RUNS / ((performance.now() - started) / 1000));
      }
    }
  } finally {
    await guard.close();
  }
  return new Map([...samples].map(([name, values]) => [name, median(values)]));
}

async function main(): Promise<void> {
  const db = await startDynalite();
  const rows: string[] = [];
  try {
    const stores: [string, IdempotencyStoreSpec, IdempotencyGuardDeps][] = [
      ['redis (local)', { kind: 'redis', url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' }, {}],
      ['dynamodb (dynalite)', { kind: 'dynamodb', table: await db.createTable(), endpoint: db.endpoint }, { dynamoDbClientConfig: db.clientConfig }],
    ];
    for (const [name, store, deps] of stores) {
      process.stderr.write(`measuring ${name}, ${RUNS} runs x ${ROUNDS} rounds per path\n`);
      const result = await measure(store, deps);
      for (const [path, perSecond] of result) {
        rows.push(`| ${name} | ${path} | ${Math.round(perSecond).toLocaleString('en')} | ${(1000 / perSecond).toFixed(3)} |`);
      }
    }
  } finally {
    await db.stop();
  }
  process.stdout.write(`${['| store | path | runs/s | ms per run |', '|---|---|---:|---:|', ...rows].join('\n')}\n`);
}

await main();
