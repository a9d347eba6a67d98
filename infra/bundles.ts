/**
 * The Lambda bundles: one esbuild bundle per function, `dist/<name>/index.mjs` exporting `handler`.
 * ESM for Node 20, minified, with a source map; the AWS SDK (`@aws-sdk/*`) is left to the Lambda
 * runtime, which ships it. Dependencies go in as they ship: the bundles are judged by their cold start
 * (`npm run bench`, section serverless), not by a size limit. Each bundle's metafile says what every
 * dependency costs.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';

/** The functions and their entry points (each exports `handler`). */
const FUNCTIONS = { pull: 'functions/pull.ts', event: 'functions/event.ts' } as const;

type FunctionName = keyof typeof FUNCTIONS;

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The default output folder, `dist/` at the repository root (git-ignored). */
const DEFAULT_OUTDIR = join(ROOT, 'dist');

/** What one dependency (or our own code) adds to a bundle, minified. */
type Cost = { readonly source: string; readonly bytes: number };

type Bundle = {
  readonly name: FunctionName;
  /** The absolute path of `index.mjs`. */
  readonly file: string;
  readonly bytes: number;
  readonly mapBytes: number;
  /** Largest first; `(esbuild glue)` is what no input accounts for (module wrappers, the banner). */
  readonly costs: readonly Cost[];
};

// Dependencies written as CommonJS call `require` for Node built-ins, which an ES module lacks.
const REQUIRE_BANNER = "import { createRequire as __boomerangCreateRequire } from 'node:module'; const require = __boomerangCreateRequire(import.meta.url);";

/**
 * Bundles every function into `<outdir>/<name>/index.mjs`.
 * @example const bundles = await buildBundles({ outdir: '/tmp/dist' }); console.log(formatBundles(bundles));
 */
async function buildBundles(options: { readonly outdir?: string } = {}): Promise<Bundle[]> {
  const outdir = options.outdir ?? DEFAULT_OUTDIR;
  return Promise.all(
    (Object.keys(FUNCTIONS) as FunctionName[]).map(async (name) => {
      const result = await build({
        absWorkingDir: ROOT,
        entryPoints: { index: FUNCTIONS[name] },
        outdir: join(outdir, name),
        outExtension: { '.js': '.mjs' },
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        minify: true,
        sourcemap: true,
        // Lambda's Node.js runtimes ship the AWS SDK v3.
        external: ['@aws-sdk/*'],
        banner: { js: REQUIRE_BANNER },
        // Licence texts go to index.mjs.LEGAL.txt next to the bundle instead of inflating it.
        legalComments: 'linked',
        metafile: true,
        logLevel: 'warning',
      });
      return describeBundle(name, join(outdir, name, 'index.mjs'), result.metafile);
    }),
  );
}

function describeBundle(name: FunctionName, file: string, metafile: Metafile): Bundle {
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
  return { name, file, bytes: output.bytes, mapBytes: map?.bytes ?? 0, costs };
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
      return [head, ...b.costs.map((c) => `  ${c.source.padEnd(32)} ${kb(c.bytes).padStart(9)}`)].join('\n');
    })
    .join('\n');
}

export { buildBundles, DEFAULT_OUTDIR, formatBundles, FUNCTIONS };
export type { Bundle, Cost, FunctionName };
