import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/errors.js';
import { DEFAULT_RETRY_POLICY, resolveRetryPolicy } from '../../shared/retry/retry-policy.js';

describe('resolveRetryPolicy', () => {
  it('applies the defaults', () => {
    expect(resolveRetryPolicy({})).toEqual(DEFAULT_RETRY_POLICY);
  });

  it('keeps given values and freezes the result', () => {
    const policy = resolveRetryPolicy({ maxRetries: 0, jitter: 0 });
    expect(policy.maxRetries).toBe(0);
    expect(Object.isFrozen(policy)).toBe(true);
  });

  it.each([
    [{ maxRetries: -1 }, 'Expected `maxRetries` in retry policy to be an integer from 0 to 1000, got -1'],
    [{ maxRetries: 1.5 }, '`maxRetries`'],
    [{ initialDelayMs: -5 }, '`initialDelayMs`'],
    [{ initialDelayMs: 0 }, 'Expected `initialDelayMs` in retry policy to be a positive integer (with 0 every retry comes back at once'],
    [{ multiplier: 0.5 }, '`multiplier`'],
    [{ maxDelayMs: 2 ** 31 }, '`maxDelayMs`'],
    [{ jitter: 1 }, '`jitter`'],
    [{ jitter: Number.NaN }, '`jitter`'],
    [{ maxRetries: '3' }, 'got "3"'],
    [{ initialDelayMs: 5000, maxDelayMs: 1000 }, 'at most `maxDelayMs`'],
    [{ retries: 3 }, 'Unknown key `retries`'],
  ])('rejects %j', (partial, message) => {
    expect(() => resolveRetryPolicy(partial as never)).toThrow(ConfigError);
    expect(() => resolveRetryPolicy(partial as never)).toThrow(message);
  });
});
