import { describe, expect, it } from 'vitest';
import { parseRatePerSecond, TokenBucket } from '../../shared/parked/token-bucket.js';

describe('TokenBucket', () => {
  it.each<[string, number, number, number[], number[]]>([
    ['spaces takes at 10/s with a burst of 1', 10, 1, [0, 0, 0, 350, 360], [0, 100, 200, 0, 90]],
    ['lets a burst through, then spaces', 10, 3, [0, 0, 0, 0, 0], [0, 0, 0, 100, 200]],
    ['refills no more than the burst after a pause', 10, 2, [0, 0, 10_000, 10_000, 10_000], [0, 0, 0, 0, 100]],
    ['waits seconds at a low rate', 0.5, 1, [0, 0], [0, 2000]],
    ['does not mind a clock that steps back', 10, 1, [1000, 900], [0, 100]],
  ])('%s', (_name, rate, burst, takesAt, waits) => {
    // Prepare
    const bucket = new TokenBucket(rate, burst, takesAt[0] ?? 0);
    // Act
    const actual = takesAt.map((at) => bucket.take(at));
    // Assess
    expect(actual).toEqual(waits);
  });

  it('keeps the average rate over many takes made as soon as allowed', () => {
    // Prepare
    const bucket = new TokenBucket(50, 1, 0);
    let now = 0;
    // Act
    for (let i = 0; i < 500; i++) now += bucket.take(now);
    // Assess: 500 takes at 50/s span 10 s, less the first free one
    expect(now).toBeGreaterThanOrEqual(9980);
    expect(now).toBeLessThanOrEqual(10_000);
  });

  it.each([
    [0, 1],
    [-1, 1],
    [Number.NaN, 1],
    [Number.POSITIVE_INFINITY, 1],
    [10, 0.5],
  ])('refuses a rate of %s with a burst of %s', (rate, burst) => {
    expect(() => new TokenBucket(rate, burst, 0)).toThrow(RangeError);
  });
});

describe('parseRatePerSecond', () => {
  it.each<[string, number | undefined]>([
    ['50', 50],
    ['50/s', 50],
    ['300/m', 5],
    ['3600/h', 1],
    ['0.5/s', 0.5],
    ['0', undefined],
    ['0/s', undefined],
    ['-5', undefined],
    ['fast', undefined],
    ['50/d', undefined],
    ['50 /s', undefined],
  ])('reads %j as %s per second', (text, expected) => {
    expect(parseRatePerSecond(text)).toBe(expected);
  });
});
