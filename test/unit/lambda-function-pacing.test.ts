import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { createLambdaFunction } from '../../shared/core/lambda-function.js';
import type { Pacer } from '../../shared/core/pacer.js';
import { emptySummary } from '../../shared/observability/summary.js';
import { recordingLogger } from '../helpers/fakes.js';

const context = { awsRequestId: 'r-1', getRemainingTimeInMillis: () => 5000 };

describe('createLambdaFunction: the rate limit', () => {
  it.each([
    {
      label: 'a pacer of its own for each invocation of a queue with a limit, and the limiter in the summary line',
      env: { RATE_LIMIT_PER_SECOND: '20', RATE_LIMIT_SHARES: '2' },
      pacing: { limiter: 'share', perSecond: 20, shares: 2 },
    },
    { label: 'no pacer, and no pacing field, without a limit', env: {}, pacing: undefined },
  ])('gives $label', async ({ env, pacing }) => {
    // Prepare
    const config = loadConfig({ WORK_QUEUE: 'orders', ...env }, 'boomerang');
    const logger = recordingLogger('info');
    const pacers: (Pacer | undefined)[] = [];
    const invoke = createLambdaFunction(
      { config, log: logger.log },
      {
        defaultName: 'boomerang',
        loadConfig: () => config,
        run: async ({ pacer }) => {
          pacers.push(pacer);
          return emptySummary();
        },
      },
    );
    // Act
    await invoke({}, context);
    await invoke({}, context);
    // Assess
    expect(pacers.map((p) => p?.describe())).toEqual([pacing, pacing]);
    if (pacing !== undefined) expect(pacers[0]).not.toBe(pacers[1]);
    expect(logger.entries().map((e) => e.pacing)).toEqual([pacing, pacing]);
  });
});
