import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/errors.js';
import { DEFAULT_RETRY_POLICY } from '../../shared/retry/retry-policy.js';
import { findRule, resolveRetryRules, topicMatches } from '../../shared/retry/retry-rules.js';

const RULES = resolveRetryRules(
  [
    { match: { errorName: 'ValidationError' }, retry: false },
    { match: { messageType: 'PartnerB' }, maxRetries: 10, maxDelayMs: 3_600_000 },
    { match: { routingKey: 'sms.*.urgent', errorName: 'TimeoutError' }, initialDelayMs: 100 },
  ],
  DEFAULT_RETRY_POLICY,
);

describe('findRule', () => {
  it.each([
    [{ errorName: 'ValidationError', messageType: 'PartnerB', routingKey: 'x' }, 0],
    [{ errorName: 'Error', messageType: 'PartnerB', routingKey: 'x' }, 1],
    [{ errorName: 'TimeoutError', messageType: undefined, routingKey: 'sms.eu.urgent' }, 2],
    [{ errorName: 'Error', messageType: undefined, routingKey: 'sms.eu.urgent' }, undefined],
    [{ errorName: 'TimeoutError', messageType: 'PartnerA', routingKey: 'sms.urgent' }, undefined],
  ])('matches %j to rule %s (first match wins, every field must match)', (subject, expected) => {
    expect(findRule(RULES, subject)?.index).toBe(expected);
  });

  it('resolves a rule policy on top of the base', () => {
    expect(RULES[1]?.policy).toEqual({ ...DEFAULT_RETRY_POLICY, maxRetries: 10 });
  });
});

describe('topicMatches', () => {
  it.each([
    ['a.b', 'a.b', true],
    ['a.*', 'a.b', true],
    ['a.*', 'a.b.c', false],
    ['a.#', 'a', true],
    ['a.#', 'a.b.c', true],
    ['#.c', 'a.b.c', true],
    ['#', '', true],
    ['*', '', true],
    ['a.#.c', 'a.c', true],
    ['a.#.c', 'a.b.d', false],
  ])('%s against %s is %s', (pattern, key, expected) => {
    expect(topicMatches(pattern, key)).toBe(expected);
  });
});

describe('resolveRetryRules', () => {
  it.each([
    [{}, 'Expected RETRY_RULES to be a JSON array'],
    [[42], 'Expected RETRY_RULES[0] to be an object'],
    [[{ retry: false }], '`match` in RETRY_RULES[0]'],
    [[{ match: {} }], 'is empty'],
    [[{ match: { queue: 'x' } }], 'Unknown key `match.queue`'],
    [[{ match: { errorName: '' } }], '`match.errorName`'],
    [[{ match: { errorName: 'E' }, retry: 'no' }], '`retry` in RETRY_RULES[0]'],
    [[{ match: { errorName: 'E' }, pauseQueue: 'yes' }], '`pauseQueue` in RETRY_RULES[0] to be true or false'],
    [[{ match: { errorName: 'E' }, maxRetries: -1 }], 'Expected `maxRetries` in RETRY_RULES[0]'],
    [[{ match: { errorName: 'E' }, delay: 5 }], 'Unknown key `delay` in RETRY_RULES[0]'],
  ])('rejects %j', (rules, message) => {
    expect(() => resolveRetryRules(rules, DEFAULT_RETRY_POLICY)).toThrow(ConfigError);
    expect(() => resolveRetryRules(rules, DEFAULT_RETRY_POLICY)).toThrow(message);
  });

  it.each([
    [{ match: { errorName: 'E' }, pauseQueue: true }, true],
    [{ match: { errorName: 'E' }, pauseQueue: false }, false],
    [{ match: { errorName: 'E' } }, undefined],
  ])('keeps pauseQueue of %j as %s (undefined: the error decides)', (rule, expected) => {
    expect(resolveRetryRules([rule], DEFAULT_RETRY_POLICY)[0]?.pauseQueue).toBe(expected);
  });
});
