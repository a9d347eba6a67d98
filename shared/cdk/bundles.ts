/**
 * The Lambda bundles: one esbuild bundle per deployed function, `dist/<queue>-<mode>/index.mjs`
 * exporting `handler` (the `pull` or `event` export of the queue's file in functions/), and
 * `dist/<queue>-retention/index.mjs` for a queue with `deploy.retention` (its retention function).
 * ESM for Node 20, minified (whitespace and syntax; identifiers keep their names), with a source map; the AWS SDK (`@aws-sdk/*`) is left to the Lambda
 * runtime, which ships it. Dependencies go in as they ship: the bundles are judged by their cold start
 * (`npm run bench`, section serverless), not by a size limit. Each bundle's metafile says what every
 * dependency costs.
 */
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import type { DeclaredQueue } from '../queues/declared-queues.js';

/** One bundle to build: its folder name under the output folder, and the module text esbuild starts from. */
type BundleEntry = { readonly name: string; readonly contents: string };

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The default output folder, `dist/` at the repository root (git-ignored). */
const DEFAULT_OUTDIR = join(ROOT, 'dist');

/** What one dependency (or our own code) adds to a bundle, minified. */
type Cost = { readonly source: string; readonly bytes: number };

type Bundle = {
  readonly name: string;
  /** The absolute path of `index.mjs`. */
  readonly file: string;
  readonly bytes: number;
  readonly mapBytes: number;
  /** Largest first; `(esbuild glue)` is what no input accounts for (module wrappers, the banner). */
  readonly costs: readonly Cost[];
  /** Files in `chunks/` next to `index.mjs`: loaded with it, or (`lazy`) only when the code first needs them. */
  readonly chunks: readonly { readonly file: string; readonly bytes: number; readonly lazy: boolean }[];
};

// Dependencies written as CommonJS call `require` for Node built-ins, which an ES module lacks.
const REQUIRE_BANNER = "import { createRequire as __boomerangCreateRequire } from 'node:module'; const require = __boomerangCreateRequire(import.meta.url);";

/** The folder name of a queue's bundle for one mode: `webhooks-pull`. */
function bundleName(queue: string, mode: string): string {
  return `${queue}-${mode}`;
}

/** The retention function's module (shared/parked/retention-function.ts). */
const RETENTION_FUNCTION = join(ROOT, 'shared/parked/retention-function.ts');

/**
 * A bundle per deployed function: each mode a queue deploys, its `pull` or `event` export as
 * `handler`; and the retention function of a queue with `deploy.retention`, made from its `queue`.
 */
function functionEntries(queues: readonly DeclaredQueue[]): BundleEntry[] {
  return queues.flatMap((queue) => [
    ...queue.deploy.modes.map((mode) => ({
      name: bundleName(queue.name, mode),
      contents: `export { ${mode} as handler } from ${JSON.stringify(queue.file)};\n`,
    })),
    ...(queue.deploy.retention === undefined ? [] : [{
      name: bundleName(queue.name, 'retention'),
      contents: `import { queue } from ${JSON.stringify(queue.file)};\nimport { createRetentionFunction } from ${JSON.stringify(RETENTION_FUNCTION)};\nexport const handler = createRetentionFunction(queue);\n`,
    }]),
  ]);
}

/**
 * Bundles each entry into `<outdir>/<name>/index.mjs`.
 * @example const bundles = await buildBundles({ entries: functionEntries(await loadDeclaredQueues()) }); console.log(formatBundles(bundles));
 */
async function buildBundles(options: { readonly entries: readonly BundleEntry[]; readonly outdir?: string }): Promise<Bundle[]> {
  const outdir = options.outdir ?? DEFAULT_OUTDIR;
  return Promise.all(
    options.entries.map(async ({ name, contents }) => {
      const result = await build({
        absWorkingDir: ROOT,
        stdin: { contents, resolveDir: ROOT, sourcefile: `${name}.ts`, loader: 'ts' },
        entryNames: 'index',
        // Code behind a dynamic import() goes to a chunk of its own, loaded at its first use: the secret
        // store (Powertools Parameters and the SDK client), loaded only with AMQP_SECRET_ID, and the
        // idempotency guard (Powertools Idempotency, the Redis client, the DynamoDB layer), loaded only
        // when idempotency is on. Without splitting, esbuild would hoist their static SDK imports into
        // index.mjs, and every cold start would load them.
        splitting: true,
        chunkNames: 'chunks/[name]-[hash]',
        outdir: join(outdir, name),
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
        // Lambda's Node.js runtimes ship the AWS SDK v3.
        external: ['@aws-sdk/*'],
        banner: { js: REQUIRE_BANNER },
        // Licence texts go to index.mjs.LEGAL.txt next to the bundle instead of inflating it.
        legalComments: 'linked',
        // A team's file imports 'boomerang': the package's own entry point, wherever the file sits.
        alias: { boomerang: join(ROOT, 'shared/index.ts') },
        metafile: true,
        logLevel: 'warning',
      });
      return describeBundle(name, join(outdir, name, 'index.mjs'), result.metafile);
    }),
  );
}

function describeBundle(name: string, file: string, metafile: Metafile): Bundle {
  const outputs = Object.entries(metafile.outputs);
  const [, output] = outputs.find(([path]) => path.endsWith('index.mjs')) ?? [];
  const [, map] = outputs.find(([path]) => path.endsWith('index.mjs.map')) ?? [];
  if (!output) throw new Error(`esbuild wrote no index.mjs for ${name}`);
  const bySource = new Map<string, number>();
  for (const [path, input] of Object.entries(output.inputs)) {
    const source = packageOf(path);
    bySource.set(source, (bySource.get(source) ?? 0) + input.bytesInOutput);
  }
  const accounted = [...bySource.values()].reduce((sum, bytes) => sum + bytes, 0);
  bySource.set('(esbuild glue)', output.bytes - accounted);
  const costs = [...bySource].map(([source, bytes]) => ({ source, bytes })).sort((a, b) => b.bytes - a.bytes);
  // A chunk reached from index.mjs by static imports only (esbuild's shared helpers) loads with it; one
  // reached only through an import() somewhere on the way loads at its first use. Followed to any depth:
  // a lazy chunk may itself load another one on demand (the guard, then its store's client).
  const lazyOf = new Map<string, boolean>();
  const walk = (imports: typeof output.imports, lazy: boolean): void => {
    for (const imported of imports) {
      if (!imported.path.includes('/chunks/')) continue;
      const isLazy = lazy || imported.kind === 'dynamic-import';
      const known = lazyOf.get(imported.path);
      if (known !== undefined && (known === isLazy || !known)) continue;
      lazyOf.set(imported.path, isLazy);
      walk(metafile.outputs[imported.path]?.imports ?? [], isLazy);
    }
  };
  walk(output.imports, false);
  const chunks = [...lazyOf].map(([path, lazy]) => ({ file: join(dirname(file), 'chunks', basename(path)), bytes: metafile.outputs[path]?.bytes ?? 0, lazy }));
  return { name, file, bytes: output.bytes, mapBytes: map?.bytes ?? 0, costs, chunks };
}

/** `node_modules/@scope/pkg/...` → `@scope/pkg`; our own files → `boomerang (own code)`. */
function packageOf(path: string): string {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  return match?.[1] ?? 'boomerang (own code)';
}

/** The build report: each bundle's size, then what each dependency costs. */
function formatBundles(bundles: readonly Bundle[]): string {
  const kb = (bytes: number): string => `${(bytes / 1000).toFixed(1)} kB`;
  return bundles
    .map((b) => {
      const head = `${b.file}: ${kb(b.bytes)} (source map ${kb(b.mapBytes)})`;
      const lazy = b.chunks.map((c) => `  ${c.lazy ? 'loaded on first use' : 'loaded with it'}: chunks/${basename(c.file)} ${kb(c.bytes)}`);
      return [head, ...b.costs.map((c) => `  ${c.source.padEnd(32)} ${kb(c.bytes).padStart(9)}`), ...lazy].join('\n');
    })
    .join('\n');
}

export { buildBundles, bundleName, DEFAULT_OUTDIR, formatBundles, functionEntries };
export type { Bundle, BundleEntry, Cost };
