import { describe, expect, it } from 'vitest';
import { parseRetryAfterMs } from '../../shared/examples/webhooks/retry-after.js';

const NOW_MS = Date.parse('2026-01-01T12:00:00Z');

describe('parseRetryAfterMs', () => {
  it.each([
    { value: '120', expected: 120_000 },
    { value: '0', expected: 0 },
    { value: ' 5 ', expected: 5_000 },
    { value: 'Thu, 01 Jan 2026 12:00:30 GMT', expected: 30_000 },
    { value: 'Thursday, 01-Jan-26 12:01:00 GMT', expected: 60_000 },
    { value: 'Thu Jan  1 12:00:10 2026', expected: 10_000 },
    { value: 'Wed, 31 Dec 2025 12:00:00 GMT', expected: 0 },
  ])('reads "$value" as $expected ms', ({ value, expected }) => {
    // Act
    const delayMs = parseRetryAfterMs(value, NOW_MS);

    // Assess
    expect(delayMs).toBe(expected);
  });

  it.each([
    { label: 'an absent header', value: null },
    { label: 'an empty value', value: '' },
    { label: 'blanks', value: '   ' },
    { label: 'a negative number', value: '-1' },
    { label: 'a fraction', value: '1.5' },
    { label: 'text', value: 'abc' },
    { label: 'an ISO date (not an HTTP-date)', value: '2026-01-02' },
    { label: 'an impossible HTTP-date', value: 'Thu, 99 Foo 2026 12:00:00 GMT' },
    { label: 'seconds too many to represent', value: '9'.repeat(400) },
  ])('ignores $label', ({ value }) => {
    // Act
    const delayMs = parseRetryAfterMs(value, NOW_MS);

    // Assess
    expect(delayMs).toBeUndefined();
  });
});
