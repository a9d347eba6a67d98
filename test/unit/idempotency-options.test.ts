import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/errors.js';
import { describeStore, type IdempotencyOptions, resolveIdempotencyOptions } from '../../shared/idempotency/options.js';
import { toBoomerangMessage } from '../../shared/message/boomerang-message.js';
import { fakeDelivery } from '../helpers/fakes.js';

/** The ConfigError `act` throws; fails the test when it does not throw. */
function configError(act: () => unknown): ConfigError {
  try {
    act();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError, nothing was thrown');
}

describe('resolveIdempotencyOptions', () => {
  const store = { kind: 'redis', url: 'redis://cache:6379' } as const;

  it('applies the defaults: one hour, the prefix boomerang, the messageId as the key', () => {
    // Prepare
    const message = toBoomerangMessage(fakeDelivery({ properties: { messageId: 'order-1' } }), 'orders', 0);
    // Act
    const resolved = resolveIdempotencyOptions({ store });
    // Assess
    expect(resolved).toMatchObject({ store, ttlSeconds: 3600, keyPrefix: 'boomerang' });
    expect(resolved.key(message)).toBe('order-1');
  });

  it.each<[string, Partial<IdempotencyOptions>, string]>([
    ['a fractional window', { ttlSeconds: 1.5 }, 'Expected `ttlSeconds` to be an integer from 1 to 31536000 (seconds), got 1.5'],
    ['a negative window', { ttlSeconds: -1 }, 'Expected `ttlSeconds` to be an integer from 1 to 31536000 (seconds), got -1'],
    ['a window in milliseconds', { ttlSeconds: 3_600_000_000 }, 'Expected `ttlSeconds` to be an integer from 1 to 31536000 (seconds), got 3600000000'],
    ['an empty prefix', { keyPrefix: ' ' }, 'Expected `keyPrefix` to be a non-empty string, got an empty one'],
    ['a key that is not a function', { key: 'messageId' as unknown as IdempotencyOptions['key'] }, 'Expected `key` to be a function of the message, got string'],
    ['an unknown store kind', { store: { kind: 'memcached' } as unknown as IdempotencyOptions['store'] }, "Expected the idempotency store kind to be 'redis' or 'dynamodb', got \"memcached\""],
    ['an http URL', { store: { kind: 'redis', url: 'http://cache:6379' } }, 'Expected the idempotency store URL to start with redis:// or rediss://, got "http://cache:6379"'],
  ])('rejects %s, naming the option', (_name, overrides, message) => {
    // Act
    const error = configError(() => resolveIdempotencyOptions({ store, ...overrides }));
    // Assess
    expect(error.message).toBe(message);
  });
});

describe('describeStore', () => {
  it.each<[IdempotencyOptions['store'], string]>([
    [{ kind: 'redis', url: 'rediss://default:s3cret@cache.example.com:6380' }, 'rediss://default:***@cache.example.com:6380'],
    [{ kind: 'redis', url: 'redis://cache:6379' }, 'redis://cache:6379'],
    [{ kind: 'dynamodb', table: 'orders-idempotency', endpoint: 'http://127.0.0.1:4567' }, 'dynamodb:orders-idempotency'],
  ])('names %j without its password', (store, expected) => {
    // Act, Assess
    expect(describeStore(store)).toBe(expected);
  });
});
