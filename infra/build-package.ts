/**
 * `npm run build:package` (and `npm pack`, through `prepack`): compiles the package a team installs
 * into dist/package/ — ESM JavaScript, declarations and source maps of shared/ (the engine, its CLI
 * and CDK construct) and functions/ (the two examples) — and writes the console's page next to the
 * compiled console, so that an installed package serves it without bundling anything. Then checks
 * that every file package.json's `exports` and `bin` name is there.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../shared/cli/args.js';
import { bundleConsolePage } from '../shared/console/assets.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'dist', 'package');

const USAGE = `Usage: npm run build:package

Compiles the package into dist/package/ with tsc (tsconfig.build.json): shared/ and functions/ as ESM
JavaScript with declarations and source maps, and the console's page (shared/console/ui, bundled with
esbuild) as dist/package/shared/console/ui/app.js and app.css. npm pack runs it (prepack).`;

/** Every path package.json's `exports` and `bin` point at, relative to the package root. */
function publishedPaths(manifest: { readonly exports?: unknown; readonly bin?: unknown }): string[] {
  const paths: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') paths.push(value);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(manifest.exports);
  walk(manifest.bin);
  return paths;
}

async function main(): Promise<number> {
  if (process.argv.slice(2).some((arg) => arg === '-h' || arg === '--help')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (process.argv.length > 2) throw new Error(`unexpected argument ${JSON.stringify(process.argv[2])}\n\n${USAGE}`);
  rmSync(OUT, { recursive: true, force: true });
  const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (tsc.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed (exit ${tsc.status ?? tsc.signal})`);
  const ui = join(OUT, 'shared/console/ui');
  mkdirSync(ui, { recursive: true });
  writeFileSync(join(ui, 'app.js'), await bundleConsolePage());
  copyFileSync(join(ROOT, 'shared/console/ui/app.css'), join(ui, 'app.css'));
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { readonly bin?: Record<string, string> };
  const missing = publishedPaths(manifest).filter((path) => !existsSync(join(ROOT, path)));
  if (missing.length > 0) throw new Error(`package.json names files the build did not write: ${missing.join(', ')}`);
  for (const bin of Object.values(manifest.bin ?? {})) chmodSync(join(ROOT, bin), 0o755);
  process.stdout.write(`compiled into ${OUT}\n`);
  return 0;
}

await runCli(USAGE, main);
