/**
 * The bench's `idempotency` section: the success and retry paths of the pull function with idempotency
 * on, for each store, next to the same path with it off, in the same rounds (the order rotates). Each
 * contestant is the bench bundle in a fresh process, configured by IDEMPOTENCY_STORE as a deployed
 * function is. Redis is the local server; DynamoDB is dynalite in the bench's process on loopback, so
 * read its rows as a floor: a real table answers in a few ms per call inside its region.
 */
import { fmt, pct, type Row } from './report.js';
import { startDynalite } from '../helpers/dynalite.js';
import { type Contestant, contest, type ContestResult, rateAndCpu, ratioOf, runContestant, setUp, type ThroughputOptions } from './throughput.js';
import { ensureBundles } from './bundles.js';

type Store = { readonly name: string; readonly env: Readonly<Record<string, string>> };

const OFF = 'idempotency off';

/** Keys outlive the bench run by a little; each round's ids are new, so nothing is shared between runs. */
const TTL_SECONDS = '600';

async function idempotencyPaths(options: ThroughputOptions): Promise<{ result: Record<string, ContestResult>; rows: Row[] }> {
  await ensureBundles(options.progress);
  const db = await startDynalite();
  try {
    const stores: Store[] = [
      { name: 'redis', env: { IDEMPOTENCY_STORE: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', IDEMPOTENCY_TTL_SECONDS: TTL_SECONDS } },
      {
        name: 'dynamodb (dynalite)',
        env: {
          IDEMPOTENCY_STORE: `dynamodb:${await db.createTable()}`,
          IDEMPOTENCY_TTL_SECONDS: TTL_SECONDS,
          AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'dynalite',
          AWS_SECRET_ACCESS_KEY: 'dynalite',
        },
      },
    ];
    const result: Record<string, ContestResult> = {};
    const rows: Row[] = [];
    for (const mode of ['success', 'retry'] as const) {
      const setup = await setUp(options, mode);
      try {
        const contestants: Contestant[] = [OFF, ...stores.map((s) => s.name)].map((name) => ({
          name,
          run: () => runContestant({ who: 'boomerang', mode, setup, options, env: stores.find((s) => s.name === name)?.env }),
        }));
        const outcome = await contest(
          options,
          setup.config.workQueue,
          contestants,
          async () => {
            if (mode !== 'retry') return;
            const copies = await options.broker.count(setup.delayQueue);
            if (copies !== options.messages) throw new Error(`expected ${options.messages} copies in the delay queue, found ${copies}`);
            await options.broker.purge(setup.delayQueue);
          },
          true,
        );
        result[mode] = outcome;
        for (const store of stores) {
          const ratio = ratioOf(outcome, store.name, OFF);
          rows.push({
            section: `idempotency, ${mode} path`,
            metric: `msg/s with idempotency on (${store.name}), ${mode === 'success' ? 'no-op handler' : 'every message retried'}, ${fmt(options.messages)} × 1 KiB, ${options.queueType}, batch ${setup.config.batchSize}, concurrency ${setup.config.concurrency}`,
            boomerang: rateAndCpu(outcome, store.name),
            anchor: `${rateAndCpu(outcome, OFF)}: the same path with idempotency off`,
            ratio: pct(ratio),
            target: 'comparison',
            verdict: 'info',
          });
        }
      } finally {
        for (const name of setup.names) await options.broker.deleteQueue(name);
        for (const name of setup.exchanges) await options.broker.deleteExchange(name);
      }
    }
    return { result, rows };
  } finally {
    await db.stop();
  }
}

export { idempotencyPaths };
