import { describe, expect, it } from 'vitest';
import type { Env } from '../../shared/config/env.js';
import { idempotencyFromEnv } from '../../shared/idempotency/from-env.js';
import { describeStore, type IdempotencyOptions, resolveIdempotencyOptions } from '../../shared/idempotency/options.js';
import { toBoomerangMessage } from '../../shared/message/boomerang-message.js';
import { configErrorOf as configError } from '../helpers/config-error.js';
import { fakeDelivery } from '../helpers/fakes.js';

describe('idempotencyFromEnv', () => {
  it.each<[string, Env, IdempotencyOptions | undefined]>([
    ['is off when IDEMPOTENCY_STORE is unset', {}, undefined],
    ['is off when IDEMPOTENCY_STORE is blank', { IDEMPOTENCY_STORE: '  ' }, undefined],
    ['reads a Redis URL, with the default window', { IDEMPOTENCY_STORE: 'redis://cache:6379' }, { store: { kind: 'redis', url: 'redis://cache:6379' }, ttlSeconds: 3600, keyPrefix: 'orders' }],
    ['reads a TLS Redis URL with credentials', { IDEMPOTENCY_STORE: 'rediss://default:s3cret@cache.example.com:6380' }, { store: { kind: 'redis', url: 'rediss://default:s3cret@cache.example.com:6380' }, ttlSeconds: 3600, keyPrefix: 'orders' }],
    ['reads a DynamoDB table and a window', { IDEMPOTENCY_STORE: 'dynamodb:orders-idempotency', IDEMPOTENCY_TTL_SECONDS: '86400' }, { store: { kind: 'dynamodb', table: 'orders-idempotency' }, ttlSeconds: 86_400, keyPrefix: 'orders' }],
  ])('%s', (_name, env, expected) => {
    // Act
    const options = idempotencyFromEnv(env, 'orders');
    // Assess
    expect(options).toEqual(expected);
  });

  it.each<[string, Env, RegExp]>([
    ['an unknown scheme', { IDEMPOTENCY_STORE: 'memcached://cache:11211' }, /^IDEMPOTENCY_STORE must be redis:\/\/host:6379, rediss:\/\/host:6379 or dynamodb:<table>; got "memcached:\/\/cache:11211"$/],
    ['a bare host', { IDEMPOTENCY_STORE: 'cache:6379' }, /IDEMPOTENCY_STORE must be .*; got "cache:6379"/],
    ['a table name too short', { IDEMPOTENCY_STORE: 'dynamodb:ab' }, /IDEMPOTENCY_STORE must be .*; got "dynamodb:ab" \(.*3 to 255 letters/],
    ['a table name with a space', { IDEMPOTENCY_STORE: 'dynamodb:my table' }, /got "dynamodb:my table"/],
    ['a Redis URL that does not parse', { IDEMPOTENCY_STORE: 'redis://cache:port' }, /got "redis:\/\/cache:port" \(Expected the idempotency store URL to look like/],
    ['a window of 0', { IDEMPOTENCY_STORE: 'redis://cache:6379', IDEMPOTENCY_TTL_SECONDS: '0' }, /^IDEMPOTENCY_TTL_SECONDS must be an integer from 1 to 31536000; got "0"$/],
    ['a window in minutes', { IDEMPOTENCY_STORE: 'redis://cache:6379', IDEMPOTENCY_TTL_SECONDS: '60m' }, /^IDEMPOTENCY_TTL_SECONDS must be an integer .*; got "60m"$/],
    ['a window with no store', { IDEMPOTENCY_TTL_SECONDS: '600' }, /^IDEMPOTENCY_TTL_SECONDS is set but IDEMPOTENCY_STORE is not/],
  ])('rejects %s, naming the variable and the value', (_name, env, message) => {
    // Act
    const error = configError(() => idempotencyFromEnv(env, 'orders'));
    // Assess
    expect(error.message).toMatch(message);
  });

  it('never shows a Redis password in its error', () => {
    // Act
    const error = configError(() => idempotencyFromEnv({ IDEMPOTENCY_STORE: 'redis://default:s3cret@cache:port' }, 'orders'));
    // Assess
    expect(error.message).not.toContain('s3cret');
    expect(error.message).toContain('redis://default:***@cache:port');
  });
});

describe('resolveIdempotencyOptions', () => {
  const store = { kind: 'redis', url: 'redis://cache:6379' } as const;

  it('applies the defaults: one hour, the messageId as the key', () => {
    // Prepare
    const message = toBoomerangMessage(fakeDelivery({ properties: { messageId: 'order-1' } }), 'orders', 0);
    // Act
    const resolved = resolveIdempotencyOptions({ store, keyPrefix: 'orders' });
    // Assess
    expect(resolved).toMatchObject({ store, ttlSeconds: 3600, keyPrefix: 'orders' });
    expect(resolved.key(message)).toBe('order-1');
  });

  it.each<[string, Partial<IdempotencyOptions>, string]>([
    ['a fractional window', { ttlSeconds: 1.5 }, 'Expected `ttlSeconds` to be an integer from 1 to 31536000 (seconds), got 1.5'],
    ['a negative window', { ttlSeconds: -1 }, 'Expected `ttlSeconds` to be an integer from 1 to 31536000 (seconds), got -1'],
    ['a window in milliseconds', { ttlSeconds: 3_600_000_000 }, 'Expected `ttlSeconds` to be an integer from 1 to 31536000 (seconds), got 3600000000'],
    ['an empty prefix', { keyPrefix: ' ' }, 'Expected `keyPrefix` to be a non-empty string, got " "'],
    ['no prefix', { keyPrefix: undefined }, 'Expected `keyPrefix` to be a non-empty string, got undefined'],
    ['a key that is not a function', { key: 'messageId' as unknown as IdempotencyOptions['key'] }, 'Expected `key` to be a function of the message, got string'],
    ['an unknown store kind', { store: { kind: 'memcached' } as unknown as IdempotencyOptions['store'] }, "Expected the idempotency store kind to be 'redis' or 'dynamodb', got \"memcached\""],
    ['an http URL', { store: { kind: 'redis', url: 'http://cache:6379' } }, 'Expected the idempotency store URL to start with redis:// or rediss://, got "http://cache:6379"'],
  ])('rejects %s, naming the option', (_name, overrides, message) => {
    // Act
    const error = configError(() => resolveIdempotencyOptions({ store, keyPrefix: 'orders', ...overrides } as IdempotencyOptions));
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
