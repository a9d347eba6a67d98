import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { PACKAGE_ALIAS } from '../helpers/package-alias.js';
import { PlainSummaryReporter } from '../helpers/plain-summary-reporter.js';

/** The console in a real browser (Debian's Chromium through playwright-core): `npm run test:browser`. */
export default defineConfig({
  resolve: { alias: PACKAGE_ALIAS },
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/browser/**/*.browser.test.ts'],
    // A browser start, a few walks of a small parking lot and rate-limited replays.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    maxWorkers: 1,
    reporters: ['default', new PlainSummaryReporter()],
  },
});
