/**
 * What a bundle weighs: its size, what each dependency adds to it, and its chunks, loaded with it or at
 * their first use. Read from esbuild's metafile; printed by `npm run build` and `npm run synth`.
 */
import { basename, dirname, join } from 'node:path';
import type { Metafile } from 'esbuild';
import { chunkLoads } from './bundle-merge.js';

/** What one dependency (or our own code) adds to a bundle, minified. */
type Cost = { readonly source: string; readonly bytes: number };

type Bundle = {
  /** `<queue>-<mode>`: the function's key, and its folder under `npm run build`'s output. */
  readonly name: string;
  /** The absolute path of `index.mjs` where esbuild wrote it (a CDK asset moves it into the cloud assembly). */
  readonly file: string;
  /** `index.mjs` alone. */
  readonly bytes: number;
  /** What a cold start loads: `index.mjs` and the chunks loaded with it. */
  readonly startBytes: number;
  readonly mapBytes: number;
  /**
   * What each dependency adds to what a cold start loads (`startBytes`), largest first; `(esbuild glue)`
   * is what no input accounts for (module wrappers, the banner).
   */
  readonly costs: readonly Cost[];
  /** Files in `chunks/` next to `index.mjs`: loaded with it, or (`lazy`) only when the code first needs them. */
  readonly chunks: readonly { readonly file: string; readonly bytes: number; readonly lazy: boolean }[];
};

/**
 * The report of the bundle `name` that esbuild wrote as `file`, from the build's metafile (`first`), and
 * from the second pass's when the chunks loaded with `index.mjs` were folded into it (`merged`,
 * bundle-merge.ts): what each dependency costs is read from the first, where each input is named.
 */
function describeBundle(name: string, file: string, first: Metafile, merged?: Metafile): Bundle {
  const outputs = Object.entries(first.outputs);
  const [indexPath, output] = outputs.find(([path]) => path.endsWith('index.mjs')) ?? [];
  if (indexPath === undefined || !output) throw new Error(`esbuild wrote no index.mjs for ${name}`);
  const last = Object.entries(merged?.outputs ?? first.outputs);
  const [, index] = last.find(([path]) => path.endsWith('index.mjs')) ?? [];
  const [, map] = last.find(([path]) => path.endsWith('index.mjs.map')) ?? [];
  const loads = chunkLoads(first, indexPath);
  const atStart = [output, ...[...loads].flatMap(([path, load]) => (load === 'start' ? (first.outputs[path] ?? []) : []))];
  // Folded into index.mjs by the second pass, the chunks loaded with it are files no more.
  const chunks = [...loads]
    .filter(([, load]) => load === 'lazy' || merged === undefined)
    .map(([path, load]) => ({ file: join(dirname(file), 'chunks', basename(path)), bytes: first.outputs[path]?.bytes ?? 0, lazy: load === 'lazy' }));
  const bytes = index?.bytes ?? output.bytes;
  const startBytes = merged === undefined ? atStart.reduce((sum, out) => sum + out.bytes, 0) : bytes;
  const bySource = new Map<string, number>();
  for (const out of atStart)
    for (const [path, input] of Object.entries(out.inputs)) {
      const source = packageOf(path);
      bySource.set(source, (bySource.get(source) ?? 0) + input.bytesInOutput);
    }
  const accounted = [...bySource.values()].reduce((sum, bytes) => sum + bytes, 0);
  bySource.set('(esbuild glue)', startBytes - accounted);
  const costs = [...bySource].map(([source, bytes]) => ({ source, bytes })).sort((a, b) => b.bytes - a.bytes);
  return { name, file, bytes, startBytes, mapBytes: map?.bytes ?? 0, costs, chunks };
}

/** `node_modules/@scope/pkg/...` → `@scope/pkg`; files outside node_modules (the project's own: the queue files, and Boomerang in this repository) → `(own code)`. */
function packageOf(path: string): string {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  return match?.[1] ?? '(own code)';
}

/** The report: each bundle's size, then what each dependency costs, then its chunks. */
function formatBundles(bundles: readonly Bundle[]): string {
  const kb = (bytes: number): string => `${(bytes / 1000).toFixed(1)} kB`;
  return bundles
    .map((b) => {
      const head = `${b.name}: index.mjs ${kb(b.bytes)}, ${kb(b.startBytes)} with the chunks loaded with it (source map ${kb(b.mapBytes)})`;
      const lazy = b.chunks.map((c) => `  ${c.lazy ? 'loaded on first use' : 'loaded with it'}: chunks/${basename(c.file)} ${kb(c.bytes)}`);
      return [head, ...b.costs.map((c) => `  ${c.source.padEnd(32)} ${kb(c.bytes).padStart(9)}`), ...lazy].join('\n');
    })
    .join('\n');
}

export { describeBundle, formatBundles };
export type { Bundle, Cost };
