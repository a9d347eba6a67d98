import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { machineInfo } from '../bench/report.js';
import { faultResultsDir } from '../bench/results-files.js';
import { REPO_ROOT } from './invoke-child.js';

// Runs in a child so that reportFault stays synchronous for its callers; prints e.g. "RabbitMQ 3.10.8".
const PRINT_SERVER_VERSION = `
import amqp from 'amqplib';
const c = await amqp.connect(process.argv[1].split(',')[0]);
const p = c.connection.serverProperties;
process.stdout.write(String(p.product) + ' ' + String(p.version));
await c.close();`;

let cachedVersion: string | undefined;

/** The version of the broker in AMQP_URL (the one the scenarios' private nodes copy), once per process. */
function brokerUnderTest(): string {
  if (cachedVersion !== undefined) return cachedVersion;
  const url = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
  try {
    cachedVersion = execFileSync(process.execPath, ['--input-type=module', '-e', PRINT_SERVER_VERSION, url], {
      cwd: REPO_ROOT,
      timeout: 10_000,
      encoding: 'utf8',
    }).trim();
  } catch {
    // A figure without its broker is still worth keeping: it lands under rabbitmq-unknown.
    cachedVersion = 'unknown';
  }
  return cachedVersion;
}

/**
 * Where a run's figures go. The committed folder the docs are generated from only when asked
 * (`RECORD_FIGURES=1`): a CI run that wrote there would leave the committed docs' tables stale, and
 * the docs check that runs after it would fail. Otherwise bench-results/latest/ (not committed).
 */
function resultsRoot(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.RECORD_FIGURES === '1' ? undefined : join(REPO_ROOT, 'bench-results', 'latest');
}

/**
 * Prints a scenario's figures and writes them, with the broker version, to
 * bench-results/faults/rabbitmq-<x.y.z>/<name>.json with `RECORD_FIGURES=1` (which
 * `npm run docs:figures` turns into docs/proof.md's tables), else under bench-results/latest/.
 */
function reportFault(name: string, figures: Record<string, unknown>): void {
  const rabbitmq = brokerUnderTest();
  const entry = { scenario: name, at: new Date().toISOString(), rabbitmq, machine: machineInfo(rabbitmq), ...figures };
  const dir = faultResultsDir(rabbitmq, resultsRoot());
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(entry, null, 2)}\n`);
  console.log(`[fault] ${name}: ${JSON.stringify(figures)}`);
}

export { reportFault };
