/**
 * `npm run docs:figures`: rewrites the generated blocks of README.md and docs/*.md from the results
 * kept in bench-results/ (the last bench and fault runs on each broker version). `--check` writes
 * nothing and exits 1 when a block differs from what it would write (a hand edit, or new results).
 *
 * Block ids: `bench-<major.minor>` (from bench-rabbitmq-<major.minor>.<patch>.json, the highest patch),
 * `faults-<major.minor>` (from faults/rabbitmq-<major.minor>.<patch>/*.json), and across brokers
 * `idempotency-faults`, `idempotency-cost`, `bundling` (docs/deploy.md: the construct's bundle
 * against NodejsFunction's) and `pause-marker-cost` (from pause-marker-cost-rabbitmq-<version>.json).
 *
 * @example
 * // npm run bench && npm run test:faults && npm run docs:figures
 * const stale = generateDocs(REPO_ROOT).filter((d) => d.expected !== d.current);
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../helpers/invoke-child.js';
import { replaceGeneratedBlocks } from './doc-blocks.js';
import { type PauseMarkerCost, renderPauseMarkerCost } from './pause-marker-figures.js';
import {
  type BenchReport,
  type FaultReport,
  renderBench,
  renderBundlingAcross,
  renderFaults,
  renderIdempotencyCostAcross,
  renderIdempotencyFaultsAcross,
} from './figures-render.js';

class DocsFiguresError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DocsFiguresError';
  }
}

const NOTICE = '<!-- Written by `npm run docs:figures` from bench-results/: edit the results, not this block. -->';

/** Of names like `bench-rabbitmq-3.10.8.json` or `rabbitmq-4.3.6`, the one of `minor` with the highest patch. */
function latestForMinor(names: readonly string[], prefix: string, minor: string, suffix = ''): string | undefined {
  const patches = names.flatMap((name) => {
    const m = new RegExp(`^${prefix.replace(/[.-]/g, '\\$&')}(\\d+\\.\\d+)\\.(\\d+)${suffix.replace(/\./g, '\\.')}$`).exec(name);
    return m && m[1] === minor ? [{ name, patch: Number(m[2]) }] : [];
  });
  return patches.sort((a, b) => b.patch - a.patch)[0]?.name;
}

/** Of `names`, the latest (highest patch) of each minor version, oldest minor first: `{ minor, name }`. */
function latestPerMinor(names: readonly string[], prefix: string, suffix = ''): Array<{ minor: string; name: string }> {
  const pattern = new RegExp(`^${prefix.replace(/[.-]/g, '\\$&')}(\\d+\\.\\d+)\\.\\d+${suffix.replace(/\./g, '\\.')}$`);
  const minors = [...new Set(names.flatMap((n) => pattern.exec(n)?.[1] ?? []))].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  return minors.map((minor) => ({ minor, name: latestForMinor(names, prefix, minor, suffix) as string }));
}

function readJson<T>(file: string, root: string): T {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch (error) {
    throw new DocsFiguresError(
      `${relative(root, file)} is not readable JSON (${(error as Error).message}); rerun the bench or fault suite that writes it, or delete it`,
      { cause: error },
    );
  }
}

function list(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** The body of one generated block, from the results under `resultsDir`. */
function renderBlock(id: string, resultsDir: string, root: string, fileName: string): string {
  if (id === 'idempotency-faults' || id === 'idempotency-cost' || id === 'bundling') return `${NOTICE}\n\n${renderAcross(id, resultsDir, root)}`;
  if (id === 'pause-marker-cost') {
    const reports = latestPerMinor(list(resultsDir), 'pause-marker-cost-rabbitmq-', '.json').map(({ name }) =>
      readJson<PauseMarkerCost>(join(resultsDir, name), root),
    );
    return `${NOTICE}\n\n${renderPauseMarkerCost(reports)}`;
  }
  const m = /^(bench|faults)-(\d+\.\d+)$/.exec(id);
  if (!m)
    throw new DocsFiguresError(
      `${fileName}: unknown generated block "${id}"; expected bench-<major.minor>, faults-<major.minor> (e.g. bench-3.10), idempotency-faults, idempotency-cost, bundling or pause-marker-cost`,
    );
  const [, kind, minor] = m as unknown as [string, string, string];
  if (kind === 'bench') {
    const name = latestForMinor(list(resultsDir), 'bench-rabbitmq-', minor, '.json');
    return `${NOTICE}\n\n${renderBench(name === undefined ? undefined : readJson<BenchReport>(join(resultsDir, name), root))}`;
  }
  const faultsDir = join(resultsDir, 'faults');
  const dir = latestForMinor(list(faultsDir), 'rabbitmq-', minor);
  const files = dir === undefined ? [] : list(join(faultsDir, dir)).filter((f) => f.endsWith('.json'));
  return `${NOTICE}\n\n${renderFaults(files.map((f) => readJson<FaultReport>(join(faultsDir, dir as string, f), root)))}`;
}

/** The latest results of every broker version there are results for, side by side (oldest version first). */
function renderAcross(id: 'idempotency-faults' | 'idempotency-cost' | 'bundling', resultsDir: string, root: string): string {
  if (id === 'idempotency-cost' || id === 'bundling') {
    const brokers = latestPerMinor(list(resultsDir), 'bench-rabbitmq-', '.json').map(({ name }) => {
      const report = readJson<BenchReport>(join(resultsDir, name), root);
      return { rabbitmq: report.machine.rabbitmq, report };
    });
    return id === 'bundling' ? renderBundlingAcross(brokers) : renderIdempotencyCostAcross(brokers);
  }
  const faultsDir = join(resultsDir, 'faults');
  return renderIdempotencyFaultsAcross(
    latestPerMinor(list(faultsDir), 'rabbitmq-').map(({ minor, name }) => {
      const dir = join(faultsDir, name);
      const reports = list(dir)
        .filter((f) => f.endsWith('.json'))
        .map((f) => readJson<FaultReport>(join(dir, f), root));
      return { rabbitmq: reports[0]?.rabbitmq ?? `RabbitMQ ${minor}`, reports };
    }),
  );
}

type DocFile = { readonly file: string; readonly current: string; readonly expected: string };

/** README.md and every docs/*.md, each with its text now and the text the generator would write. */
function generateDocs(root: string, resultsDir = join(root, 'bench-results')): DocFile[] {
  const files = [
    'README.md',
    ...list(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => join('docs', f)),
  ];
  return files.map((file) => {
    const current = readFileSync(join(root, file), 'utf8');
    return { file, current, expected: replaceGeneratedBlocks(current, file, (id) => renderBlock(id, resultsDir, root, file)) };
  });
}

function main(): void {
  const check = process.argv.includes('--check');
  const stale = generateDocs(REPO_ROOT).filter((d) => d.current !== d.expected);
  for (const d of stale) {
    if (check) process.stderr.write(`${d.file}: its generated figures differ from bench-results/; run npm run docs:figures\n`);
    else writeFileSync(join(REPO_ROOT, d.file), d.expected);
  }
  if (!check) process.stdout.write(stale.length === 0 ? 'docs: figures already up to date\n' : `docs: rewrote ${stale.map((d) => d.file).join(', ')}\n`);
  process.exitCode = check && stale.length > 0 ? 1 : 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    main();
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}

export { DocsFiguresError, generateDocs, latestForMinor, renderBlock };
export type { DocFile };
