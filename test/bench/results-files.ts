import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/invoke-child.js';

/**
 * Where bench and fault results live. The latest run on each broker version is kept (and committed), so
 * the docs' figures can be regenerated from it: `npm run docs:figures`.
 *
 * @example
 * benchResultsFile('RabbitMQ 3.10.8'); // <repo>/bench-results/bench-rabbitmq-3.10.8.json
 */
const RESULTS_DIR = join(REPO_ROOT, 'bench-results');

/** The `x.y.z` in a server version such as `RabbitMQ 3.10.8`; `unknown` when it has none. */
function brokerVersion(serverVersion: string): string {
  return /\d+\.\d+\.\d+/.exec(serverVersion)?.[0] ?? 'unknown';
}

/** The bench's per-broker results file, next to `latest.json`. */
function benchResultsFile(serverVersion: string, dir = RESULTS_DIR): string {
  return join(dir, `bench-rabbitmq-${brokerVersion(serverVersion)}.json`);
}

/** The fault suite's per-broker folder: one `<scenario>.json` per scenario. */
function faultResultsDir(serverVersion: string, dir = RESULTS_DIR): string {
  return join(dir, 'faults', `rabbitmq-${brokerVersion(serverVersion)}`);
}

export { RESULTS_DIR, benchResultsFile, brokerVersion, faultResultsDir };
