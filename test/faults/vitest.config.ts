import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { PACKAGE_ALIAS } from '../helpers/package-alias.js';
import { PlainSummaryReporter } from '../helpers/plain-summary-reporter.js';

/**
 * The fault-injection suite (`npm run test:faults`, test/faults, part of CI) and the cluster scenario
 * (`npm run test:cluster`, test/cluster). They kill processes, cut connections and stop private
 * RabbitMQ nodes (never rabbit@localhost), so files and tests run one at a time: two scenarios killing
 * things at once would blur each other's counts.
 */
export default defineConfig({
  resolve: { alias: PACKAGE_ALIAS },
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/faults/**/*.test.ts', 'test/cluster/**/*.test.ts'],
    fileParallelism: false,
    maxWorkers: 1,
    sequence: { concurrent: false },
    // A scenario runs dozens of child invocations and waits on real TTLs and node restarts.
    testTimeout: 300_000,
    hookTimeout: 180_000,
    reporters: ['default', new PlainSummaryReporter()],
  },
});
