import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { PACKAGE_ALIAS } from '../helpers/package-alias.js';
import { PlainSummaryReporter } from '../helpers/plain-summary-reporter.js';

/**
 * The package test (`npm run test:package`, test/package, part of CI once per run): `npm pack`, an
 * install from the registry into an empty directory and a team's own CDK app. What it checks is the
 * package, not the broker, so it is not part of `npm test`, which runs once per broker version: it
 * took 66 s of a 3.10 leg's and 83 s of a 4.3 leg's test time (2026-11-29).
 */
export default defineConfig({
  resolve: { alias: PACKAGE_ALIAS },
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/package/**/*.test.ts'],
    globalSetup: ['test/helpers/leftover-check.ts'],
    // A synth of the team's app takes most of a minute on a loaded machine. The install in beforeAll
    // (npm pack, aws-cdk-lib) has its own timeout in the test file.
    testTimeout: 180_000,
    maxWorkers: 1,
    reporters: ['default', new PlainSummaryReporter()],
  },
});
