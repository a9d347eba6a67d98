import { describe, expect, it } from 'vitest';
import { topologyOptionsFromConfig, loadConfig } from '../../shared/config/config.js';
import { formatDuration, retryTimeline } from '../../shared/topology/retry-timeline.js';

function topology(env: Record<string, string | undefined>) {
  const config = loadConfig({ WORK_QUEUE: 'orders', ...env });
  return { policy: config.policy, topology: topologyOptionsFromConfig(config) };
}

describe('retryTimeline', () => {
  it("gives the README's example: retries at 1, 2, 4 and 8 s come due within 15 s, but a pull every minute takes them a minute apart", () => {
    // Prepare
    const { policy, topology: options } = topology({ MAX_RETRIES: '4', BACKOFF_INITIAL_MS: '1000' });
    // Act
    const timeline = retryTimeline(policy, options, 60_000);
    // Assess
    expect(timeline.attempts.map((a) => [a.attempt, a.delayMs, a.pathDelayMs, a.atMs, a.pullAtMs])).toEqual([
      [1, 0, 0, 0, 0],
      [2, 1000, 1000, 1000, 60_000],
      [3, 2000, 2000, 3000, 120_000],
      [4, 4000, 4000, 7000, 180_000],
      [5, 8000, 8000, 15_000, 240_000],
    ]);
    expect(timeline.attempts[1]).toMatchObject({ jitterMs: [900, 1100], via: 'orders.delay.1000ms' });
    expect(timeline).toMatchObject({ parkedAtMs: 15_000, parkedPullAtMs: 240_000 });
  });

  it.each([
    {
      why: 'a delay longer than the schedule waits for the tick after it comes due',
      env: { MAX_RETRIES: '2', BACKOFF_INITIAL_MS: '90000', BACKOFF_MULTIPLIER: '1' },
      pullEveryMs: 60_000,
      pullAt: [0, 120_000, 240_000],
    },
    { why: 'no schedule (event mode only): none', env: { MAX_RETRIES: '1' }, pullEveryMs: undefined, pullAt: [undefined, undefined] },
    {
      why: 'a delay that is a whole number of ticks is taken at that tick',
      env: { MAX_RETRIES: '1', BACKOFF_INITIAL_MS: '120000' },
      pullEveryMs: 60_000,
      pullAt: [0, 120_000],
    },
  ])('$why', ({ env, pullEveryMs, pullAt }) => {
    // Prepare
    const { policy, topology: options } = topology(env);
    // Act
    const timeline = retryTimeline(policy, options, pullEveryMs);
    // Assess
    expect(timeline.attempts.map((a) => a.pullAtMs)).toEqual(pullAt);
  });

  it('snaps a delay a rule asks up to its tier, and counts the tier', () => {
    // Prepare: a cap of 5 s makes the 4th delay (8 s) the cap
    const { policy, topology: options } = topology({ MAX_RETRIES: '4', BACKOFF_INITIAL_MS: '1000', BACKOFF_MAX_MS: '5000' });
    // Act
    const timeline = retryTimeline(policy, options, undefined);
    // Assess
    expect(timeline.attempts.map((a) => [a.delayMs, a.pathDelayMs])).toEqual([
      [0, 0],
      [1000, 1000],
      [2000, 2000],
      [4000, 4000],
      [5000, 5000],
    ]);
  });

  it.each([
    { mode: 'native', env: { DELAY_MODE: 'native', MAX_RETRIES: '1' }, via: "orders (the broker's delay)" },
    { mode: 'exact', env: { DELAY_MODE: 'exact', MAX_RETRIES: '1' }, via: 'the boomerang.delay levels' },
  ])('says where a retry waits in $mode mode', ({ env, via }) => {
    // Prepare
    const { policy, topology: options } = topology(env);
    // Act
    const [, retry] = retryTimeline(policy, options, undefined).attempts;
    // Assess
    expect(retry).toMatchObject({ delayMs: 1000, pathDelayMs: 1000, via });
  });

  it('parks at once with no retries', () => {
    // Prepare
    const { policy, topology: options } = topology({ MAX_RETRIES: '0' });
    // Act
    const timeline = retryTimeline(policy, options, 60_000);
    // Assess
    expect(timeline).toMatchObject({ attempts: [{ attempt: 1 }], parkedAtMs: 0, parkedPullAtMs: 0 });
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0 ms'],
    [900, '900 ms'],
    [1000, '1 s'],
    [1500, '1.5 s'],
    [59_999, '1 min'],
    [60_000, '1 min'],
    [61_000, '1 min 1 s'],
    [119_999, '2 min'],
    [3_900_000, '1 h 5 min'],
  ])('%i ms: %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
