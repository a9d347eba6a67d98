import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { PACKAGE_ALIAS } from './helpers/package-alias.js';
import { PlainSummaryReporter } from './helpers/plain-summary-reporter.js';

export default defineConfig({
  resolve: { alias: PACKAGE_ALIAS },
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    // Fails the run naming each test-named queue or exchange it made and left on the broker.
    globalSetup: ['test/helpers/leftover-check.ts'],
    // Broker tests wait on real TTLs; a few seconds each is normal.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests share one broker; files in parallel are fine because names are unique,
    // but two cores are all we have.
    maxWorkers: 2,
    reporters: ['default', new PlainSummaryReporter()],
  },
});
