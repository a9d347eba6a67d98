import { describe, expect, it } from 'vitest';
import * as entry from '../../shared/index.js';
import { BoomerangError, ConfigError, isNamedError, PublishError, RetryFunctionError } from '../../shared/errors.js';

describe('BoomerangError', () => {
  it('is the base of the errors Boomerang raises, and RetryFunctionError is the same class', () => {
    // Act
    const error = new ConfigError('Expected `maxRetries` to be a non-negative integer, got -1');
    // Assess
    expect(error).toBeInstanceOf(BoomerangError);
    expect(RetryFunctionError).toBe(BoomerangError);
    expect(new BoomerangError('failed').name).toBe('BoomerangError');
  });
});

describe('isNamedError', () => {
  it.each([
    ['an error of that class', new PublishError('nacked', 'nacked'), 'PublishError', true],
    ['a copy from another bundle: same name, other class', Object.assign(new Error('nacked'), { name: 'PublishError' }), 'PublishError', true],
    ['a subclass, which has a name of its own', new ConfigError('bad'), 'BoomerangError', false],
    ['another error', new Error('boom'), 'PublishError', false],
    ['a thrown string', 'PublishError', 'PublishError', false],
    ['undefined', undefined, 'PublishError', false],
  ])('tells %s', (_, error, name, expected) => {
    // Act
    const named = isNamedError(error, name);
    // Assess
    expect(named).toBe(expected);
  });
});

describe('the public entry point', () => {
  it('exports exactly the errors a caller can see', () => {
    // Act
    const errors = Object.keys(entry)
      .filter((name) => /^[A-Z]\w*Error$/.test(name))
      .sort();
    // Assess
    expect(errors).toEqual([
      'BoomerangError',
      'BrokerConnectionError',
      'ConfigError',
      'EventBatchError',
      'EventShapeError',
      'HandlerTimeoutError',
      'PublishError',
      'PullAbortedError',
      'RetryFunctionError',
      'RetryableError',
      'SecretFetchError',
      'TopologyDriftError',
      'TopologyMismatchError',
      'UnrecoverableError',
    ]);
  });
});
