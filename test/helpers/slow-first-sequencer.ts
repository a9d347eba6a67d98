import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The slowest files of `npm test` (measured on the 2-core machine on 2026-11-29, 3.10, in seconds:
 * package-install 69, cdk-construct 22, parked-reconnect 22, idempotency-store-failures 21, rate-limit
 * 20, add-your-own-handler 19, pull 16, pause-queue 15, secrets 13), started first. A fresh clone has no
 * vitest cache of durations, so vitest orders files by size, and the longest one could start last and
 * run alone on one of the two workers at the end; started first, it runs beside the rest.
 */
const SLOW_FIRST = [
  'test/integration/package-install.test.ts',
  'test/unit/cdk-construct.test.ts',
  'test/integration/parked-reconnect.test.ts',
  'test/integration/idempotency-store-failures.test.ts',
  'test/integration/rate-limit.test.ts',
  'test/integration/add-your-own-handler.test.ts',
  'test/integration/pull.test.ts',
  'test/integration/pause-queue.test.ts',
  'test/integration/secrets.test.ts',
];

class SlowFirstSequencer extends BaseSequencer {
  public override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification): number => {
      const at = SLOW_FIRST.findIndex((slow) => file.moduleId.endsWith(slow));
      return at === -1 ? SLOW_FIRST.length : at;
    };
    // Array#sort is stable: the rest keep vitest's own order.
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}

export { SlowFirstSequencer };
