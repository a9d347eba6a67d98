import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { PACKAGE_ALIAS } from './helpers/package-alias.js';
import { PlainSummaryReporter } from './helpers/plain-summary-reporter.js';

/** The unit tests that build CDK stacks (aws-cdk-lib, cdk-nag). */
const CDK_TESTS = ['test/unit/cdk-*.test.ts', 'test/unit/infra-*.test.ts', 'test/unit/idempotency-table.test.ts'];
/**
 * Tests that each need a process of their own: two register OpenTelemetry's global tracer provider,
 * which the API keeps for the life of the process; one sets Lambda's environment before the X-Ray SDK
 * loads, which reads it once (in a shared module cache, a file before it that loaded the SDK outside
 * Lambda left it sending nothing: both its tests then saw no segment); one measures the heap of its own process; the rest
 * fake the process's timers (vi.useFakeTimers) and count them, which would also count a timer that
 * something a file before them left running sets meanwhile (a CI run saw one more than the test's own).
 */
const OWN_PROCESS_TESTS = [
  'test/unit/otel-tracer.test.ts',
  'test/integration/traces.test.ts',
  'test/integration/xray-traces.test.ts',
  'test/integration/parked-memory.test.ts',
  'test/unit/confirm-publisher.test.ts',
  'test/unit/pacer.test.ts',
  'test/unit/turn-line.test.ts',
  'test/unit/invocation.test.ts',
  'test/unit/invocation-end.test.ts',
  'test/unit/invocation-stops.test.ts',
];

export default defineConfig({
  resolve: { alias: PACKAGE_ALIAS },
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    // Files of a project share one module cache per worker (no isolation), except those that need a
    // process of their own: modules load once per worker instead of once per file. That was most of the
    // CDK tests' time (aws-cdk-lib and cdk-nag: their CPU time fell from 143 s to 58 s), and halved the
    // import time of the rest (36 s to 18 s of a 3.10 run, 2026-11-29). Nothing is mocked or left in
    // the environment: each file's queues, connections and servers are its own and closed after it.
    projects: [
      {
        extends: true,
        test: {
          name: 'tests',
          include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
          exclude: [...CDK_TESTS, ...OWN_PROCESS_TESTS],
          isolate: false,
        },
      },
      { extends: true, test: { name: 'cdk', include: CDK_TESTS, isolate: false } },
      { extends: true, test: { name: 'isolated', include: OWN_PROCESS_TESTS } },
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
