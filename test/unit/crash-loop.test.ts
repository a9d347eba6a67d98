import { describe, expect, it } from 'vitest';
import { checkCrashLoop, crashLoopError, givenBackReachesLimit } from '../../shared/core/crash-loop.js';

describe('checkCrashLoop', () => {
  it.each([
    { headers: undefined, limit: 10, before: 0, expected: { kind: 'handle' } },
    { headers: {}, limit: 10, before: 0, expected: { kind: 'handle' } },
    { headers: { 'x-acquired-count': 40 }, limit: 10, before: 0, expected: { kind: 'handle' } },
    { headers: { 'x-delivery-count': 9 }, limit: 10, before: 0, expected: { kind: 'handle' } },
    { headers: { 'x-delivery-count': 10 }, limit: 10, before: 0, expected: { kind: 'park', deliveries: 11, reason: 'crash loop: delivered 11 times' } },
    {
      headers: { 'x-delivery-count': 10, 'x-acquired-count': 14 },
      limit: 10,
      before: 0,
      expected: { kind: 'park', deliveries: 15, reason: 'crash loop: delivered 15 times' },
    },
    { headers: { 'x-delivery-count': 12 }, limit: 1, before: 0, expected: { kind: 'park', deliveries: 13, reason: 'crash loop: delivered 13 times' } },
    { headers: { 'x-delivery-count': BigInt(20) }, limit: 20, before: 0, expected: { kind: 'park', deliveries: 21, reason: 'crash loop: delivered 21 times' } },
    { headers: { 'x-delivery-count': 50 }, limit: 0, before: 0, expected: { kind: 'handle' } },
    { headers: { 'x-delivery-count': 10 }, limit: 10, before: 1, expected: { kind: 'handle' } },
    { headers: { 'x-delivery-count': 19 }, limit: 10, before: 3, expected: { kind: 'handle' } },
    { headers: { 'x-delivery-count': 20 }, limit: 10, before: 1, expected: { kind: 'park', deliveries: 21, reason: 'crash loop: delivered 21 times' } },
    { headers: { 'x-delivery-count': 'abc' }, limit: 1, before: 0, expected: { kind: 'handle' } },
    { headers: { 'x-delivery-count': -3 }, limit: 1, before: 0, expected: { kind: 'handle' } },
    { headers: { 'x-delivery-count': null }, limit: 1, before: 0, expected: { kind: 'handle' } },
  ])('$headers with limit $limit, $before parked before: $expected.kind', ({ headers, limit, before, expected }) => {
    // Act
    const verdict = checkCrashLoop(headers, limit, before);
    // Assess
    expect(verdict).toEqual(expected);
  });

  it.each([
    { count: 15, own: 6, expected: { kind: 'handle' } },
    { count: 16, own: 6, expected: { kind: 'park', deliveries: 17, reason: 'crash loop: delivered 17 times' } },
    { count: 16, own: 0, expected: { kind: 'park', deliveries: 17, reason: 'crash loop: delivered 17 times' } },
    { count: 9, own: 20, expected: { kind: 'handle' } },
  ])('native: x-delivery-count $count of which $own own failed settlements: $expected.kind', ({ count, own, expected }) => {
    // Act
    const verdict = checkCrashLoop({ 'x-delivery-count': count }, 10, 0, { ownReturns: own });
    // Assess
    expect(verdict).toEqual(expected);
  });

  it.each([
    { headers: { 'x-acquired-count': 10 }, acquired: false, before: 0, expected: { kind: 'handle' } },
    { headers: { 'x-acquired-count': 9 }, acquired: true, before: 0, expected: { kind: 'handle' } },
    { headers: { 'x-acquired-count': 10 }, acquired: true, before: 0, expected: { kind: 'park', deliveries: 11, reason: 'crash loop: delivered 11 times' } },
    {
      headers: { 'x-delivery-count': 3, 'x-acquired-count': 12 },
      acquired: true,
      before: 0,
      expected: { kind: 'park', deliveries: 13, reason: 'crash loop: delivered 13 times' },
    },
    { headers: { 'x-delivery-count': 10 }, acquired: true, before: 0, expected: { kind: 'park', deliveries: 11, reason: 'crash loop: delivered 11 times' } },
    { headers: { 'x-delivery-count': 9, 'x-acquired-count': 'abc' }, acquired: true, before: 0, expected: { kind: 'handle' } },
    { headers: { 'x-acquired-count': 10 }, acquired: true, before: 1, expected: { kind: 'handle' } },
    // After another park, at the last count by either: 20 failed invocations, or 4.x's own limit.
    { headers: { 'x-acquired-count': 19 }, acquired: true, before: 1, expected: { kind: 'handle' } },
    { headers: { 'x-acquired-count': 20 }, acquired: true, before: 1, expected: { kind: 'park', deliveries: 21, reason: 'crash loop: delivered 21 times' } },
    { headers: { 'x-delivery-count': 19, 'x-acquired-count': 30 }, acquired: false, before: 1, expected: { kind: 'handle' } },
    {
      headers: { 'x-delivery-count': 20, 'x-acquired-count': 25 },
      acquired: true,
      before: 1,
      expected: { kind: 'park', deliveries: 26, reason: 'crash loop: delivered 26 times' },
    },
  ])('event mode (acquired $acquired): $headers, $before parked before: $expected.kind', ({ headers, acquired, before, expected }) => {
    // Act
    const verdict = checkCrashLoop(headers, 10, before, { acquired });
    // Assess
    expect(verdict).toEqual(expected);
  });
});

describe('crashLoopError', () => {
  it('is a CrashLoopError that is not retryable, naming the limit', () => {
    // Act
    const error = crashLoopError({ kind: 'park', deliveries: 11, reason: 'crash loop: delivered 11 times' }, 10);
    // Assess
    expect(error).toMatchObject({ name: 'CrashLoopError', retryable: false });
    expect(error.message).toContain('handed out 11 times');
    expect(error.message).toContain('CRASH_LOOP_LIMIT=10');
  });
});

describe('givenBackReachesLimit', () => {
  it.each([
    { headers: undefined, limit: 2, expected: false },
    { headers: {}, limit: 2, expected: false },
    { headers: { 'x-delivery-count': 0 }, limit: 2, expected: false },
    { headers: { 'x-delivery-count': 1 }, limit: 2, expected: true },
    { headers: { 'x-delivery-count': 1 }, limit: 1, expected: true },
    { headers: { 'x-delivery-count': 0 }, limit: 1, expected: true },
    { headers: { 'x-delivery-count': 8 }, limit: 10, expected: false },
    { headers: { 'x-delivery-count': 9 }, limit: 10, expected: true },
    { headers: { 'x-delivery-count': 'nine' }, limit: 10, expected: false },
    // The guard off: 4.x's own limit still drops a message returned past 20.
    { headers: { 'x-delivery-count': 18 }, limit: 0, expected: false },
    { headers: { 'x-delivery-count': 19 }, limit: 0, expected: true },
  ])('x-delivery-count in $headers, CRASH_LOOP_LIMIT $limit: $expected', ({ headers, limit, expected }) => {
    // Act
    const reaches = givenBackReachesLimit(headers, limit);
    // Assess
    expect(reaches).toBe(expected);
  });
});
