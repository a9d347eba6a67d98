/**
 * The Lambda bundles: one esbuild bundle per deployed function, `<queue>-<mode>/index.mjs` exporting
 * `handler` (the `pull` or `event` export of the queue's file), and `<queue>-retention/index.mjs` for a
 * queue with `deploy.retention` (its retention function). ESM for Node 20, minified (whitespace and
 * syntax; identifiers keep their names), with a source map, code loaded late split into chunks (and
 * the chunks a cold start would load with `index.mjs` folded back into it: bundle-merge.ts); the AWS
 * SDK (`@aws-sdk/*`) is left to the Lambda runtime, which ships it. Dependencies go in as they ship: the
 * bundles are judged by their cold start (`npm run bench`, section serverless), not by a size limit.
 * The construct bundles at synth (`bundleSync`, in a CDK asset); `npm run build` writes the same
 * bundles into dist/ (`buildBundles`).
 */
import { join, resolve } from 'node:path';
import { build, type BuildOptions, buildSync } from 'esbuild';
import type { ConfigInCode } from '../config/config-in-code.js';
import type { Mode, ResolvedDeploy } from '../queues/deploy-options.js';
import type { DelayMode } from '../topology/types.js';
import { mergeOptions, relinkChunks, startChunkFiles } from './bundle-merge.js';
import { type Bundle, describeBundle } from './bundle-report.js';
import { ownModule } from './own-modules.js';

/**
 * One bundle to build: its folder name under the output folder, the module text esbuild starts from,
 * and, for a queue's pull or event function, its mode: `defineQueue` then leaves the other mode's
 * function (and its code) out.
 */
type BundleEntry = {
  readonly name: string;
  readonly contents: string;
  readonly mode?: Mode;
  /**
   * The delay path the queue's code fixes (its `delayMode`: `'native'`, or `'copy'` for tiers and
   * exact), the only one its pull bundle holds. @default both: the environment's DELAY_MODE chooses
   */
  readonly delayPath?: 'native' | 'copy';
};

/** A queue whose functions are bundled: its name, its definition file (absolute) and what it deploys. */
type BundledQueue = {
  readonly name: string;
  readonly file: string;
  readonly deploy: Pick<ResolvedDeploy, 'modes' | 'retention'>;
  /** The options in the queue's code: a delay mode set there is one the environment cannot change. @default none */
  readonly code?: Pick<ConfigInCode, 'delayMode'>;
};

// Dependencies written as CommonJS call `require` for Node built-ins, which an ES module lacks.
const REQUIRE_BANNER = "import { createRequire as __boomerangCreateRequire } from 'node:module'; const require = __boomerangCreateRequire(import.meta.url);";

/** The retention function's module (shared/parked/retention-function), in this package. */
const RETENTION_FUNCTION = ownModule(import.meta.url, '../parked/retention-function');

/** The topology resource's handler module (shared/topology/topology-resource), in this package. */
const TOPOLOGY_RESOURCE = ownModule(import.meta.url, '../topology/topology-resource');

/** The bundle of a queue's topology custom resource (`<queue>-topology`), made from its `queue`: the construct deploys one per queue. */
function topologyEntry(queue: Pick<BundledQueue, 'name' | 'file'>): BundleEntry {
  return {
    name: bundleName(queue.name, 'topology'),
    contents: `import { queue } from ${JSON.stringify(queue.file)};\nimport { createTopologyResource } from ${JSON.stringify(TOPOLOGY_RESOURCE)};\nexport const handler = createTopologyResource(queue);\n`,
  };
}

/** The folder name of a queue's bundle for one mode: `webhooks-pull`. */
function bundleName(queue: string, mode: string): string {
  return `${queue}-${mode}`;
}

/** `npm run build`'s output folder when none is given: `dist/` in the working directory (git-ignored). */
function defaultOutdir(): string {
  return resolve('dist');
}

/** The delay path a delay mode takes: the broker's own delay, or a copy to the delay queues. */
function delayPathOf(delayMode: DelayMode): 'native' | 'copy' {
  return delayMode === 'native' ? 'native' : 'copy';
}

/**
 * A bundle per deployed function: each mode a queue deploys, its `pull` or `event` export as
 * `handler`; and the retention function of a queue with `deploy.retention`, made from its `queue`.
 */
function functionEntries(queues: readonly BundledQueue[]): BundleEntry[] {
  return queues.flatMap((queue) => [
    ...queue.deploy.modes.map((mode) => ({
      name: bundleName(queue.name, mode),
      contents: `export { ${mode} as handler } from ${JSON.stringify(queue.file)};\n`,
      mode,
      ...(mode === 'pull' && queue.code?.delayMode !== undefined ? { delayPath: delayPathOf(queue.code.delayMode) } : {}),
    })),
    ...(queue.deploy.retention === undefined
      ? []
      : [
          {
            name: bundleName(queue.name, 'retention'),
            contents: `import { queue } from ${JSON.stringify(queue.file)};\nimport { createRetentionFunction } from ${JSON.stringify(RETENTION_FUNCTION)};\nexport const handler = createRetentionFunction(queue);\n`,
          },
        ]),
  ]);
}

/**
 * esbuild's options for one entry, written to `outdir/index.mjs`. `workingDir` is the team's project:
 * the queue file's imports (`boomerang-rabbitmq` among them) resolve from there, as Node would resolve
 * them (its node_modules; in this repository, tsconfig.json's `paths`).
 */
function esbuildOptions(entry: BundleEntry, outdir: string, workingDir: string): BuildOptions & { metafile: true } {
  return {
    absWorkingDir: workingDir,
    stdin: { contents: entry.contents, resolveDir: workingDir, sourcefile: `${entry.name}.ts`, loader: 'ts' },
    entryNames: 'index',
    // Code behind a dynamic import() goes to a chunk of its own, loaded at its first use: the secret
    // store (Powertools Parameters and the SDK client), loaded only with AMQP_SECRET_ID, and the
    // idempotency guard (Powertools Idempotency, the Redis client, the DynamoDB layer), loaded only
    // when idempotency is on. Without splitting, esbuild would hoist their static SDK imports into
    // index.mjs, and every cold start would load them (NodejsFunction cannot split: docs/deploy.md).
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Whitespace and syntax only: renaming identifiers made the import about 1.4 ms slower on
    // a cold start (measured, Node 20), and names kept make Lambda's stack traces readable.
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: true,
    // The map holds the mappings only, not a copy of every source: a stack trace needs the file and
    // line, and with --enable-source-maps Node parses each map as its chunk loads, on the cold start.
    sourcesContent: false,
    // Lambda's Node.js runtimes ship the AWS SDK v3.
    external: ['@aws-sdk/*'],
    banner: { js: REQUIRE_BANNER },
    // Licence texts go to index.mjs.LEGAL.txt next to the bundle instead of inflating it.
    legalComments: 'linked',
    metafile: true,
    logLevel: 'warning',
    // The mode this bundle serves, read by defineQueue (shared/queues/define-queue.ts) and folded at
    // build time: the event function's code is not in a pull bundle, nor the pull function's in an event one.
    // Likewise a pull bundle holds only the delay path its queue's code sets, which no variable can
    // change (shared/pull/pull-function.ts): no copy path and no amqplib in a native queue's, no native
    // engine in a tiers or exact queue's. Every other function bundle says 'any', so that the native
    // engine's late load of amqplib (native/amqp091-late.ts) folds to the module loaded already.
    ...(entry.mode === undefined
      ? {}
      : {
          define: {
            'process.env.BOOMERANG_BUNDLED_MODE': JSON.stringify(entry.mode),
            'process.env.BOOMERANG_BUNDLED_DELAY_MODE': JSON.stringify(entry.delayPath ?? 'any'),
          },
        }),
  };
}

/**
 * Bundles each entry into `<outdir>/<name>/index.mjs`, from the working directory's project.
 * @example const bundles = await buildBundles({ entries: functionEntries(await loadDeclaredQueues()) }); console.log(formatBundles(bundles));
 */
async function buildBundles(options: { readonly entries: readonly BundleEntry[]; readonly outdir?: string }): Promise<Bundle[]> {
  const outdir = options.outdir ?? defaultOutdir();
  return Promise.all(
    options.entries.map(async (entry) => {
      const dir = join(outdir, entry.name);
      const options = esbuildOptions(entry, dir, process.cwd());
      const first = (await build(options)).metafile;
      const folded = startChunkFiles(first, dir);
      const merged = folded.length === 0 ? undefined : (await build(mergeOptions(options, dir, folded))).metafile;
      if (merged !== undefined) relinkChunks(dir, folded, first, merged);
      return describeBundle(entry.name, join(dir, 'index.mjs'), first, merged);
    }),
  );
}

/** Bundles one entry into `outdir/index.mjs`, synchronously: for a CDK asset, bundled while the construct is built. */
function bundleSync(entry: BundleEntry, outdir: string, workingDir: string): Bundle {
  const options = esbuildOptions(entry, outdir, workingDir);
  const first = buildSync(options).metafile;
  const folded = startChunkFiles(first, outdir);
  const merged = folded.length === 0 ? undefined : buildSync(mergeOptions(options, outdir, folded)).metafile;
  if (merged !== undefined) relinkChunks(outdir, folded, first, merged);
  return describeBundle(entry.name, join(outdir, 'index.mjs'), first, merged);
}

export { buildBundles, bundleName, bundleSync, defaultOutdir, functionEntries, topologyEntry };
export type { BundleEntry };
