import { describe, expect, it } from 'vitest';
import type { DeployedQueue } from '../../shared/cdk/deployed-queue.js';
import { timeoutWarnings } from '../../shared/cdk/timeout-warnings.js';
import { type DeployOptions, resolveDeploy } from '../../shared/queues/deploy-options.js';

/** One queue as the stack sees it, with `deploy` and the functions' timings. */
function queue(
  deploy: DeployOptions,
  timings: { httpTimeoutMs: number; safetyMarginMs: number; attemptTimeoutMs?: number } = { httpTimeoutMs: 10_000, safetyMarginMs: 3000 },
): Pick<DeployedQueue, 'name' | 'file' | 'deploy' | 'timings'> {
  return { name: 'orders', file: 'functions/orders.ts', deploy: resolveDeploy(deploy, "defineQueue('orders')"), timings };
}

describe('timeoutWarnings', () => {
  it.each<[DeployOptions, { httpTimeoutMs: number; safetyMarginMs: number } | undefined, string[]]>([
    [{}, undefined, []],
    [{ pull: { timeoutSeconds: 13 } }, undefined, []],
    [{ pull: { timeoutSeconds: 12 } }, undefined, ['pull']],
    [{}, { httpTimeoutMs: 58_000, safetyMarginMs: 3000 }, ['pull']],
    [{}, { httpTimeoutMs: 57_000, safetyMarginMs: 3000 }, []],
    [{}, { httpTimeoutMs: 10_000, safetyMarginMs: 55_000 }, ['pull']],
    [{ modes: ['event'], event: { timeoutSeconds: 10 } }, undefined, ['event']],
    [{ modes: ['pull', 'event'], acknowledgeCompetingModes: true, pull: { timeoutSeconds: 10 }, event: { timeoutSeconds: 30 } }, undefined, ['pull']],
    [{ modes: ['pull', 'event'], acknowledgeCompetingModes: true, pull: { timeoutSeconds: 10 }, event: { timeoutSeconds: 10 } }, undefined, ['pull', 'event']],
  ])('for deploy %j and timings %j warns about %j', (deploy, timings, modes) => {
    // Act
    const warnings = timeoutWarnings(queue(deploy, timings));
    // Assess
    expect(warnings.map((w) => w.mode)).toEqual(modes);
  });

  it.each([
    { attemptTimeoutMs: undefined, timeoutSeconds: 60, warned: false },
    { attemptTimeoutMs: 57_000, timeoutSeconds: 60, warned: false },
    { attemptTimeoutMs: 57_001, timeoutSeconds: 60, warned: true },
    { attemptTimeoutMs: 120_000, timeoutSeconds: 120, warned: true },
  ])('an attemptTimeoutMs of $attemptTimeoutMs in a $timeoutSeconds s function: warned $warned', ({ attemptTimeoutMs, timeoutSeconds, warned }) => {
    // Act
    const warnings = timeoutWarnings(queue({ pull: { timeoutSeconds } }, { httpTimeoutMs: 10_000, safetyMarginMs: 3000, attemptTimeoutMs }));
    // Assess
    expect(warnings.some((w) => w.message.includes('attemptTimeoutMs'))).toBe(warned);
  });

  it('says what the timeout cuts and what to change, and where', () => {
    // Act
    const [warning] = timeoutWarnings(queue({ pull: { timeoutSeconds: 10 } }, { httpTimeoutMs: 9500, safetyMarginMs: 2000 }));
    // Assess
    expect(warning?.message).toBe(
      'orders pull function: HTTP_TIMEOUT_MS (9500) + SAFETY_MARGIN_MS (2000) = 11500 ms exceeds its timeout, deploy.pull.timeoutSeconds=10 s: a partner call is aborted after 8000 ms at most, ' +
        'before HTTP_TIMEOUT_MS, and its message retried. Raise deploy.pull.timeoutSeconds in functions/orders.ts to at least 12, or lower HTTP_TIMEOUT_MS or SAFETY_MARGIN_MS in functionEnvironment.',
    );
  });
});
