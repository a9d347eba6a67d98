import { describe, expect, it } from 'vitest';
import { decideRetry, errorFacts, type DecideRetryInput } from '../../shared/retry/decide-retry.js';
import { RetryableError, UnrecoverableError } from '../../shared/errors.js';
import { DEFAULT_RETRY_POLICY, resolveRetryPolicy } from '../../shared/retry/retry-policy.js';
import { resolveRetryRules } from '../../shared/retry/retry-rules.js';
import { loadConfig } from '../../shared/config/config.js';

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

describe('decideRetry: pausing the queue', () => {
  const rateLimited = (fields: Record<string, unknown>) => Object.assign(new Error('429'), { name: 'RateLimited', ...fields });
  const pausingRule = resolveRetryRules([{ match: { errorName: 'RateLimited' }, pauseQueue: true }], DEFAULT_RETRY_POLICY);
  const quietRule = resolveRetryRules([{ match: { errorName: 'RateLimited' }, pauseQueue: false }], DEFAULT_RETRY_POLICY);
  const neverRule = resolveRetryRules([{ match: { errorName: 'RateLimited' }, retry: false, pauseQueue: true }], DEFAULT_RETRY_POLICY);

  it.each([
    ['an error without the flag does not pause', {}, [], 0, { kind: 'retry', retryNo: 1, delayMs: 1000 }],
    [
      'pauseQueue on the error pauses for its retryAfterMs',
      { pauseQueue: true, retryAfterMs: 60_000 },
      [],
      0,
      { kind: 'retry', retryNo: 1, delayMs: 60_000, pauseMs: 60_000 },
    ],
    [
      'a retryAfterMs shorter than the backoff still sets the pause',
      { pauseQueue: true, retryAfterMs: 300 },
      [],
      0,
      { kind: 'retry', retryNo: 1, delayMs: 1000, pauseMs: 300 },
    ],
    ["no retryAfterMs: the pause is the message's retry delay", { pauseQueue: true }, [], 2, { kind: 'retry', retryNo: 3, delayMs: 4000, pauseMs: 4000 }],
    [
      "a retryAfterMs over the policy's max is capped",
      { pauseQueue: true, retryAfterMs: 10 * 3_600_000 },
      [],
      0,
      { kind: 'retry', retryNo: 1, delayMs: 3_600_000, pauseMs: 3_600_000 },
    ],
    ['a truthy non-boolean does not pause', { pauseQueue: 'yes', retryAfterMs: 5000 }, [], 0, { kind: 'retry', retryNo: 1, delayMs: 5000 }],
    [
      'a rule with pauseQueue pauses an error without the flag',
      { retryAfterMs: 5000 },
      pausingRule,
      0,
      { kind: 'retry', retryNo: 1, delayMs: 5000, pauseMs: 5000 },
    ],
    [
      "a rule with pauseQueue false overrides the error's flag",
      { pauseQueue: true, retryAfterMs: 5000 },
      quietRule,
      0,
      { kind: 'retry', retryNo: 1, delayMs: 5000 },
    ],
    [
      'a message whose retries are spent is parked, and the queue still pauses',
      { pauseQueue: true, retryAfterMs: 5000 },
      [],
      5,
      { kind: 'park', reason: 'retries exhausted: 5 of 5 made', pauseMs: 5000 },
    ],
    [
      'parked, without retryAfterMs: the delay its next retry would have had',
      { pauseQueue: true },
      [],
      5,
      { kind: 'park', reason: 'retries exhausted: 5 of 5 made', pauseMs: 32_000 },
    ],
    [
      'an unrecoverable error that asks to pause is parked and pauses',
      { pauseQueue: true, retryable: false, retryAfterMs: 2000 },
      [],
      0,
      { kind: 'park', reason: 'unrecoverable error RateLimited', pauseMs: 2000 },
    ],
    [
      'a rule that never retries and pauses',
      { retryAfterMs: 2000 },
      neverRule,
      0,
      { kind: 'park', reason: 'rule RETRY_RULES[0] says never retry', pauseMs: 2000 },
    ],
  ])('%s', (_name, fields, rules, retryNo, expected) => {
    expect(decideRetry(input({ error: rateLimited(fields), rules, retryNo }))).toStrictEqual(expected);
  });

  it('reads pauseQueue from a RetryableError', () => {
    const error = new RetryableError('429', { retryAfterMs: 7000, pauseQueue: true });
    expect(decideRetry(input({ error }))).toEqual({ kind: 'retry', retryNo: 1, delayMs: 7000, pauseMs: 7000 });
  });

  it('reads a pausing rule from RETRY_RULES as JSON', () => {
    // Prepare
    const config = loadConfig({
      WORK_QUEUE: 'orders',
      BACKOFF_JITTER: '0',
      RETRY_RULES: '[{"match":{"errorName":"RateLimited"},"pauseQueue":true,"maxRetries":10}]',
    });
    // Act
    const decision = decideRetry(input({ error: rateLimited({ retryAfterMs: 30_000 }), rules: config.rules, policy: config.policy }));
    // Assess
    expect(decision).toEqual({ kind: 'retry', retryNo: 1, delayMs: 30_000, pauseMs: 30_000 });
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

  it.each([
    [true, true],
    [false, undefined],
    ['true', undefined],
    [undefined, undefined],
  ])('reads pauseQueue %j as %j', (pauseQueue, expected) => {
    expect(errorFacts({ name: 'E', pauseQueue }).pauseQueue).toBe(expected);
  });
});
