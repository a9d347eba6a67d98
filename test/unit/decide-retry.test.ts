import { describe, expect, it } from 'vitest';
import { decideRetry, errorFacts, type DecideRetryInput } from '../../shared/retry/decide-retry.js';
import { RetryableError, UnrecoverableError } from '../../shared/errors.js';
import { DEFAULT_RETRY_POLICY, resolveRetryPolicy } from '../../shared/retry/retry-policy.js';
import { resolveRetryRules } from '../../shared/retry/retry-rules.js';

const NO_JITTER = (): number => 0.5;

function input(overrides: Partial<DecideRetryInput>): DecideRetryInput {
  return {
    error: new Error('boom'),
    retryNo: 0,
    policy: DEFAULT_RETRY_POLICY,
    rules: [],
    messageType: undefined,
    routingKey: 'orders.created',
    random: NO_JITTER,
    ...overrides,
  };
}

describe('decideRetry', () => {
  it.each([
    [0, { kind: 'retry', retryNo: 1, delayMs: 1000 }],
    [1, { kind: 'retry', retryNo: 2, delayMs: 2000 }],
    [4, { kind: 'retry', retryNo: 5, delayMs: 16_000 }],
    [5, { kind: 'park', reason: 'retries exhausted: 5 of 5 made' }],
    [9, { kind: 'park', reason: 'retries exhausted: 9 of 5 made' }],
  ])('a plain error after %i retries: %j', (retryNo, expected) => {
    expect(decideRetry(input({ retryNo }))).toEqual(expected);
  });

  it('parks at once when maxRetries is 0', () => {
    expect(decideRetry(input({ policy: resolveRetryPolicy({ maxRetries: 0 }) })).kind).toBe('park');
  });

  it.each([
    ['UnrecoverableError', new UnrecoverableError('bad body')],
    ['a foreign error with retryable=false', Object.assign(new Error('x'), { name: 'ValidationError', retryable: false })],
    ['a plain object with retryable=false', { name: 'Nope', retryable: false }],
  ])('parks %s at once', (_label, error) => {
    expect(decideRetry(input({ error }))).toMatchObject({ kind: 'park', reason: expect.stringMatching(/^unrecoverable error /) });
  });

  it.each([
    [30_000, 30_000], // longer than backoff: honoured
    [10, 1000], // shorter than backoff: backoff wins
    [10 * 3_600_000, 3_600_000], // capped at the max
  ])('retryAfterMs %i gives a delay of %i', (retryAfterMs, expected) => {
    expect(decideRetry(input({ error: new RetryableError('429', { retryAfterMs }) }))).toEqual({ kind: 'retry', retryNo: 1, delayMs: expected });
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY, '5000'])('ignores an invalid retryAfterMs %s', (retryAfterMs) => {
    expect(decideRetry(input({ error: { name: 'E', retryAfterMs } }))).toEqual({ kind: 'retry', retryNo: 1, delayMs: 1000 });
  });

  it('applies the first matching rule', () => {
    // Prepare
    const rules = resolveRetryRules(
      [
        { match: { errorName: 'ValidationError' }, retry: false },
        { match: { messageType: 'PartnerB' }, maxRetries: 10, initialDelayMs: 5000 },
      ],
      DEFAULT_RETRY_POLICY,
    );
    const validation = Object.assign(new Error('x'), { name: 'ValidationError' });
    // Act / Assess
    expect(decideRetry(input({ rules, error: validation }))).toEqual({ kind: 'park', reason: 'rule RETRY_RULES[0] says never retry' });
    expect(decideRetry(input({ rules, messageType: 'PartnerB', retryNo: 7 }))).toEqual({ kind: 'retry', retryNo: 8, delayMs: 640_000 });
    expect(decideRetry(input({ rules, messageType: 'PartnerA', retryNo: 7 })).kind).toBe('park');
  });
});

describe('errorFacts', () => {
  it.each([
    ['a string', 'oops', { name: 'string', message: 'oops', retryable: true }],
    ['undefined', undefined, { name: 'undefined', message: 'undefined', retryable: true }],
    ['an error without name', Object.assign(new Error('m'), { name: '' }), { name: 'Error', message: 'm', retryable: true }],
  ])('reads %s', (_label, thrown, expected) => {
    expect(errorFacts(thrown)).toMatchObject(expected);
  });
});
