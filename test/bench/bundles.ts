import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildBundles, functionEntries } from '../../shared/cdk/bundles.js';
import { loadDeclaredQueues } from '../../shared/queues/declared-queues.js';
import { REPO_ROOT } from '../helpers/invoke-child.js';
import { queue } from './cold-start-native-entry.js';

/** The folder the bench builds into: its own, so that it never races `npm run build`. */
const BENCH_DIST = join(REPO_ROOT, 'dist', 'bench');

/** The real bundles of the webhooks queue (functions/webhooks.ts), as `npm run build` makes them. */
const BUNDLES = { pull: join(BENCH_DIST, 'webhooks-pull/index.mjs'), event: join(BENCH_DIST, 'webhooks-event/index.mjs') } as const;

/**
 * A bench-only bundle of the public entry point (shared/index.ts), built the same way: the throughput
 * and memory children call its `createPullFunction` with their own handler, configured by the environment.
 */
const LIBRARY_BUNDLE = join(BENCH_DIST, 'boomerang/index.mjs');

/**
 * The cold start's anchor (test/bench/cold-start-anchor-entry.ts): a hand-written amqplib consumer
 * with the webhooks function's handler, bundled the same way as the functions.
 */
const ANCHOR_BUNDLE = join(BENCH_DIST, 'cold-start-anchor/index.mjs');

/** The webhooks queue as a native queue (test/bench/cold-start-native-entry.ts), for the native cold start. */
const NATIVE_BUNDLE = join(BENCH_DIST, 'webhooks-native-pull/index.mjs');

let built: Promise<string | undefined> | undefined;

/**
 * Builds the bundles with the real bundler, once per bench run (the sources may have changed since the
 * last one). Resolves undefined when they are built, else why not (the caller reports "not measured yet").
 */
function ensureBundles(progress: (line: string) => void): Promise<string | undefined> {
  built ??= (async () => {
    progress('  building the bench bundles into dist/bench');
    try {
      const webhooks = (await loadDeclaredQueues()).filter((q) => q.name === 'webhooks');
      await buildBundles({
        outdir: BENCH_DIST,
        entries: [
          ...functionEntries(webhooks),
          { name: 'boomerang', contents: "export * from './shared/index.ts';\n" },
          { name: 'cold-start-anchor', contents: "export * from './test/bench/cold-start-anchor-entry.ts';\n" },
          // As a team's native queue is bundled: its pull function only, without the copy path.
          ...functionEntries([
            { name: 'webhooks-native', file: join(REPO_ROOT, 'test/bench/cold-start-native-entry.ts'), deploy: queue.deploy, code: queue.code },
          ]),
        ],
      });
    } catch (error) {
      return `not measured yet: the bundle build failed (${(error as Error).message.split('\n')[0]})`;
    }
    return [...Object.values(BUNDLES), LIBRARY_BUNDLE, ANCHOR_BUNDLE, NATIVE_BUNDLE].every((b) => existsSync(b))
      ? undefined
      : 'not measured yet: the webhooks queue does not deploy both modes';
  })();
  return built;
}

export { ANCHOR_BUNDLE, BUNDLES, ensureBundles, LIBRARY_BUNDLE, NATIVE_BUNDLE };
