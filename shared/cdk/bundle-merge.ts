/**
 * One file at a cold start. esbuild's code splitting puts the code that `index.mjs` shares with a chunk
 * loaded on first use (the secret store, the idempotency guard, the tracers, rhea) into chunks of
 * their own, which `index.mjs` imports at once: 8 files besides `index.mjs` for the webhooks pull
 * bundle, 11 for a native queue's. Node's ESM loader pays for each file (it resolves, reads, compiles
 * and links them one by one): importing the webhooks pull bundle took 22.7 ms, and 18.4 ms with those
 * chunks folded into `index.mjs`; a native queue's pull bundle 20 against 14 ms (Node 20.20, fresh
 * processes, medians of 8 and 10, 2026-12-01).
 *
 * So after esbuild has split, a second esbuild pass bundles `index.mjs` with the chunks it imports
 * statically into one `index.mjs` that also exports what they exported; the chunks loaded on first
 * use then import those names from `../index.mjs` instead of from the folded chunks, so every module
 * still exists once (one `ConfigError` class, one logger setup). The second pass reads the first
 * pass's source maps, so `index.mjs.map` still names each `.ts` file and line.
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import type { BuildOptions, Metafile } from 'esbuild';

/**
 * When each chunk a bundle's `index.mjs` reaches loads, by metafile output path: `start`, with
 * `index.mjs`, when static imports alone lead to it; `lazy`, at its first use, when an `import()` is on
 * every way there (the guard, then its store's client). Followed to any depth. A chunk esbuild wrote
 * that nothing reaches (an `import()` in code the build left out) is not there.
 */
function chunkLoads(metafile: Metafile, index: string): Map<string, 'start' | 'lazy'> {
  const loads = new Map<string, 'start' | 'lazy'>();
  const walk = (from: string, lazy: boolean): void => {
    for (const imported of metafile.outputs[from]?.imports ?? []) {
      if (!imported.path.includes('/chunks/')) continue;
      const load = lazy || imported.kind === 'dynamic-import' ? 'lazy' : 'start';
      const known = loads.get(imported.path);
      if (known === 'start' || known === load) continue;
      loads.set(imported.path, load);
      walk(imported.path, load === 'lazy');
    }
  };
  walk(index, false);
  return loads;
}

/** The chunks `index.mjs` loads with it (chunkLoads), as metafile output paths. */
function startChunks(metafile: Metafile, index: string): string[] {
  return [...chunkLoads(metafile, index)].filter(([, load]) => load === 'start').map(([path]) => path);
}

/**
 * The second pass's options: `index.mjs` and its start chunks (absolute paths) into one `index.mjs`
 * in `dir`, exporting every name they export. `base` is the first pass's options (target, minifying,
 * externals), kept.
 */
function mergeOptions(base: BuildOptions, dir: string, chunks: readonly string[]): BuildOptions & { metafile: true } {
  const index = join(dir, 'index.mjs');
  const licensed = [index, ...chunks].some((file) => existsSync(`${file}.LEGAL.txt`));
  const reexports = [index, ...chunks].map((file) => `export * from ${JSON.stringify(`./${relative(dir, file)}`)};\n`).join('');
  return {
    absWorkingDir: dir,
    stdin: { contents: reexports, resolveDir: dir, sourcefile: 'boomerang-folded-start.mjs', loader: 'js' },
    outfile: index,
    allowOverwrite: true,
    bundle: true,
    // The first pass kept only what has effects or is used; a package.json above the output folder
    // (the project's own, with its `sideEffects`) must not make this pass drop a chunk it imports bare.
    ignoreAnnotations: true,
    platform: 'node',
    format: 'esm',
    target: base.target,
    minifyWhitespace: base.minifyWhitespace,
    minifySyntax: base.minifySyntax,
    sourcemap: true,
    sourcesContent: false,
    // Every chunk loaded on first use stays a file of its own. Given as absolute paths, esbuild matches
    // each import() by the file it resolves to, and writes its path relative to index.mjs: a folded
    // chunk wrote it relative to chunks/. (A plugin could do the same, but not in `buildSync`, which
    // the construct bundles with.)
    external: [...(base.external ?? []), ...lazyChunks(dir, chunks)],
    // No banner: each file of the first pass starts with it already, and esbuild renames their
    // `require`s apart.
    // The licence comments went to each file's .LEGAL.txt in the first pass: gathered by `relinkChunks`.
    legalComments: 'none',
    ...(licensed ? { footer: { js: '/*! For license information please see index.mjs.LEGAL.txt */' } } : {}),
    metafile: true,
    logLevel: 'warning',
  };
}

/**
 * After the second pass: checks that `index.mjs` exports every name the folded chunks did, points the
 * chunks loaded on first use at `index.mjs` for them, gathers the folded chunks' licence texts into
 * `index.mjs.LEGAL.txt`, and deletes the folded chunks. An import is rewritten to the same length
 * (spaces after it), so the chunk's source map still fits.
 */
function relinkChunks(dir: string, chunks: readonly string[], first: Metafile, merged: Metafile): void {
  const exported = new Set(Object.entries(merged.outputs).find(([path]) => path.endsWith('index.mjs'))?.[1].exports ?? []);
  for (const chunk of chunks) {
    const output = Object.entries(first.outputs).find(([path]) => join(dir, 'chunks', basename(path)) === chunk)?.[1];
    const missing = (output?.exports ?? []).filter((name) => !exported.has(name));
    if (missing.length > 0)
      throw new Error(
        `bundling ${dir}: index.mjs does not export ${missing.join(', ')} of ${basename(chunk)} after folding its start chunks (two chunks export one name)`,
      );
  }
  const folded = new Set(chunks.map((chunk) => basename(chunk)));
  const chunkDir = join(dir, 'chunks');
  for (const file of readdirSync(chunkDir).filter((f) => f.endsWith('.mjs') && !folded.has(f))) {
    const path = join(chunkDir, file);
    const code = readFileSync(path, 'utf8');
    const relinked = code.replace(/(from|import)\s*"\.\/([^"]+\.mjs)"/g, (whole, keyword: string, name: string) =>
      folded.has(name) ? `${keyword}"../index.mjs"`.padEnd(whole.length, ' ') : whole,
    );
    if (relinked !== code) writeFileSync(path, relinked);
  }
  const legal = [join(dir, 'index.mjs'), ...chunks]
    .map((file) => `${file}.LEGAL.txt`)
    .filter((file) => existsSync(file))
    .map((file) =>
      readFileSync(file, 'utf8')
        .replace(/^\s*Bundled license information:\s*/, '')
        .trim(),
    );
  if (legal.length > 0) writeFileSync(join(dir, 'index.mjs.LEGAL.txt'), `Bundled license information:\n\n${legal.join('\n\n')}\n`);
  for (const chunk of chunks) for (const suffix of ['', '.map', '.LEGAL.txt']) rmSync(`${chunk}${suffix}`, { force: true });
}

/** The chunks left as files: every one in `dir`'s chunks/ but `folded`, as absolute paths. */
function lazyChunks(dir: string, folded: readonly string[]): string[] {
  const chunkDir = join(dir, 'chunks');
  return readdirSync(chunkDir)
    .filter((f) => f.endsWith('.mjs'))
    .map((f) => join(chunkDir, f))
    .filter((path) => !folded.includes(path));
}

/** What the folded chunks were: their paths under `dir` (the first pass's metafile names them from its working directory). */
function startChunkFiles(metafile: Metafile, dir: string): string[] {
  const index = Object.keys(metafile.outputs).find((path) => path.endsWith('index.mjs'));
  if (index === undefined) return [];
  return startChunks(metafile, index).map((path) => join(dir, 'chunks', basename(path)));
}

export { chunkLoads, mergeOptions, relinkChunks, startChunkFiles, startChunks };
