import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { PACKAGE_ALIAS } from './helpers/package-alias.js';
import { PlainSummaryReporter } from './helpers/plain-summary-reporter.js';

/** The unit tests that build CDK stacks (aws-cdk-lib, cdk-nag). */
const CDK_TESTS = ['test/unit/cdk-*.test.ts', 'test/unit/infra-*.test.ts', 'test/unit/idempotency-table.test.ts'];

export default defineConfig({
  resolve: { alias: PACKAGE_ALIAS },
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    // Two projects: the CDK tests share one module cache per worker (no isolation), so aws-cdk-lib and
    // cdk-nag load once per worker instead of once per file, which was most of their time (their CPU
    // time fell from 143 s to 58 s). Nothing in them is mocked or left in the environment.
    projects: [
      { extends: true, test: { name: 'tests', include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'], exclude: CDK_TESTS } },
      { extends: true, test: { name: 'cdk', include: CDK_TESTS, isolate: false } },
    ],
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
