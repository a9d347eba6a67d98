import { describe, expect, it } from 'vitest';
import { backoffDelayMs, baseDelayMs, tierDelaysMs } from '../../shared/retry/backoff.js';
import { DEFAULT_RETRY_POLICY, resolveRetryPolicy } from '../../shared/retry/retry-policy.js';

describe('baseDelayMs', () => {
  it.each([
    // retryNo, initial, multiplier, max, expected
    [1, 1000, 2, 3_600_000, 1000],
    [2, 1000, 2, 3_600_000, 2000],
    [5, 1000, 2, 3_600_000, 16_000],
    [7, 60_000, 2, 3_600_000, 3_600_000], // 3 840 000 capped
    [3, 500, 1, 3_600_000, 500], // multiplier 1: constant
    [3, 1000, 1.5, 3_600_000, 2250],
  ])('retry %i with %i ms × %d (max %i) waits %i ms', (retryNo, initialDelayMs, multiplier, maxDelayMs, expected) => {
    // Prepare
    const policy = resolveRetryPolicy({ initialDelayMs, multiplier, maxDelayMs });
    // Act / Assess
    expect(baseDelayMs(retryNo, policy)).toBe(expected);
  });
});

describe('backoffDelayMs', () => {
  it.each([
    [0, 1800], // lowest random: -10 %
    [0.5, 2000], // middle: no spread
    [0.999_999, 2200], // highest: +10 %
  ])('with random() = %d the second retry waits %i ms', (r, expected) => {
    expect(backoffDelayMs(2, DEFAULT_RETRY_POLICY, () => r)).toBe(expected);
  });

  it('stays within ± jitter over many samples', () => {
    // Prepare
    const samples = Array.from({ length: 500 }, () => backoffDelayMs(3, DEFAULT_RETRY_POLICY, Math.random));
    // Assess
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(3600);
    expect(Math.max(...samples)).toBeLessThanOrEqual(4400);
  });

  it('never exceeds the cap, even with jitter', () => {
    const policy = resolveRetryPolicy({ initialDelayMs: 10_000, maxDelayMs: 10_000, jitter: 0.5 });
    expect(backoffDelayMs(1, policy, () => 0.999)).toBe(10_000);
  });
});

describe('tierDelaysMs', () => {
  it('lists the delays of the default policy, then tiers doubling up to its cap', () => {
    expect(tierDelaysMs([DEFAULT_RETRY_POLICY])).toEqual([
      1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 512_000, 1_024_000, 2_048_000, 3_600_000,
    ]);
  });

  it('merges policies and stops at the cap', () => {
    // Prepare
    const partnerB = resolveRetryPolicy({ maxRetries: 1000, initialDelayMs: 60_000 });
    // Act
    const tiers = tierDelaysMs([DEFAULT_RETRY_POLICY, partnerB]);
    // Assess: the defaults doubling up to the 1 h cap, and 60 s × 2^n up to the same cap
    expect(tiers).toEqual([
      1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 64_000, 120_000, 128_000, 240_000, 256_000, 480_000, 512_000, 960_000, 1_024_000, 1_920_000, 2_048_000,
      3_600_000,
    ]);
  });

  it('with a constant backoff, still grows (doubling) up to the cap for long Retry-After requests', () => {
    expect(tierDelaysMs([resolveRetryPolicy({ multiplier: 1, initialDelayMs: 5000, maxRetries: 3, maxDelayMs: 60_000 })])).toEqual([
      5000, 10_000, 20_000, 40_000, 60_000,
    ]);
  });

  it('is empty when retries are disabled', () => {
    expect(tierDelaysMs([resolveRetryPolicy({ maxRetries: 0 })])).toEqual([]);
  });
});
