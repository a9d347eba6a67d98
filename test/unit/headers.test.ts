import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/errors.js';
import { assertRetryHeaderName, readRetryNo } from '../../shared/message/headers.js';

describe('readRetryNo', () => {
  it.each([
    ['missing', undefined, 0],
    ['null', null, 0],
    ['an integer', 3, 3],
    ['zero', 0, 0],
    ['a string of digits', '7', 7],
    ['digits with spaces', ' 2 ', 2],
    ['bytes of digits', Buffer.from('4'), 4],
    ['a bigint', 5n, 5],
  ])('reads %s as %i without a warning', (_label, value, expected) => {
    const reading = readRetryNo(value === undefined ? {} : { 'x-retry-no': value }, 'x-retry-no');
    expect(reading).toEqual({ retryNo: expected });
  });

  it.each([
    ['"abc"', 'abc'],
    ['-1', -1],
    ['1.5', 1.5],
    ['1e12', 1e12],
    ['a huge bigint', 10n ** 20n],
    ['"-3"', '-3'],
    ['a table', { n: 1 }],
    ['an array', [1]],
    ['true', true],
  ])('treats %s as 0 with a warning', (_label, value) => {
    const reading = readRetryNo({ 'x-retry-no': value }, 'x-retry-no');
    expect(reading.retryNo).toBe(0);
    expect(reading.warning).toMatch(/^header x-retry-no is malformed/);
  });

  it('reads a configured header name', () => {
    expect(readRetryNo({ 'retry-no': 2, 'x-retry-no': 9 }, 'retry-no').retryNo).toBe(2);
  });
});

describe('assertRetryHeaderName', () => {
  it.each(['x-retry-no', 'retry-no', 'attempt', 'X'])('accepts %s', (name) => {
    expect(() => assertRetryHeaderName(name, 'RETRY_HEADER')).not.toThrow();
  });

  it.each([
    ['x-death', 'the broker owns that namespace'],
    ['x-first-death-queue', 'the broker owns that namespace'],
    ['X-DEATH', 'the broker owns that namespace'],
    ['x-acquired-count', 'the broker owns that namespace'],
    ['boomerang-attempts', 'already uses'],
    ['BCC', 'already uses'],
    ['r'.repeat(256), 'at most 255 bytes'],
  ])('refuses %s with a ConfigError naming the variable', (name, reason) => {
    // Act
    const act = (): void => assertRetryHeaderName(name, 'RETRY_HEADER');
    // Assess
    expect(act).toThrow(ConfigError);
    expect(act).toThrow(/^RETRY_HEADER must/);
    expect(act).toThrow(reason);
  });
});
