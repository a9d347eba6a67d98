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
    [
      'reads a Redis URL, with the default window',
      { IDEMPOTENCY_STORE: 'redis://cache:6379' },
      { store: { kind: 'redis', url: 'redis://cache:6379' }, ttlSeconds: 3600, keyPrefix: 'orders' },
    ],
    [
      'reads a TLS Redis URL with credentials',
      { IDEMPOTENCY_STORE: 'rediss://default:s3cret@cache.example.com:6380' },
      { store: { kind: 'redis', url: 'rediss://default:s3cret@cache.example.com:6380' }, ttlSeconds: 3600, keyPrefix: 'orders' },
    ],
    [
      'reads a DynamoDB table and a window',
      { IDEMPOTENCY_STORE: 'dynamodb:orders-idempotency', IDEMPOTENCY_TTL_SECONDS: '86400' },
      { store: { kind: 'dynamodb', table: 'orders-idempotency' }, ttlSeconds: 86_400, keyPrefix: 'orders' },
    ],
    [
      'reads the Redis password secret, cached 300 s by default',
      { IDEMPOTENCY_STORE: 'rediss://cache:6380', IDEMPOTENCY_STORE_SECRET_ID: 'boomerang/redis' },
      { store: { kind: 'redis', url: 'rediss://cache:6380', secretId: 'boomerang/redis', secretCacheSeconds: 300 }, ttlSeconds: 3600, keyPrefix: 'orders' },
    ],
    [
      'reads the secret with a user in the URL and SECRET_CACHE_SECONDS',
      {
        IDEMPOTENCY_STORE: 'redis://app@cache:6379',
        IDEMPOTENCY_STORE_SECRET_ID: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:redis-AbCdEf',
        SECRET_CACHE_SECONDS: '60',
      },
      {
        store: {
          kind: 'redis',
          url: 'redis://app@cache:6379',
          secretId: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:redis-AbCdEf',
          secretCacheSeconds: 60,
        },
        ttlSeconds: 3600,
        keyPrefix: 'orders',
      },
    ],
    [
      'ignores a blank secret variable',
      { IDEMPOTENCY_STORE: 'redis://cache:6379', IDEMPOTENCY_STORE_SECRET_ID: ' ' },
      { store: { kind: 'redis', url: 'redis://cache:6379' }, ttlSeconds: 3600, keyPrefix: 'orders' },
    ],
  ])('%s', (_name, env, expected) => {
    // Act
    const options = idempotencyFromEnv(env, 'orders');
    // Assess
    expect(options).toEqual(expected);
  });

  it.each<[string, Env, RegExp]>([
    [
      'an unknown scheme',
      { IDEMPOTENCY_STORE: 'memcached://cache:11211' },
      /^IDEMPOTENCY_STORE must be redis:\/\/host:6379, rediss:\/\/host:6379 or dynamodb:<table>; got "memcached:\/\/cache:11211"$/,
    ],
    ['a bare host', { IDEMPOTENCY_STORE: 'cache:6379' }, /IDEMPOTENCY_STORE must be .*; got "cache:6379"/],
    ['a table name too short', { IDEMPOTENCY_STORE: 'dynamodb:ab' }, /IDEMPOTENCY_STORE must be .*; got "dynamodb:ab" \(.*3 to 255 letters/],
    ['a table name with a space', { IDEMPOTENCY_STORE: 'dynamodb:my table' }, /got "dynamodb:my table"/],
    [
      'a Redis URL that does not parse',
      { IDEMPOTENCY_STORE: 'redis://cache:port' },
      /got "redis:\/\/cache:port" \(Expected the idempotency store URL to look like/,
    ],
    [
      'a window of 0',
      { IDEMPOTENCY_STORE: 'redis://cache:6379', IDEMPOTENCY_TTL_SECONDS: '0' },
      /^IDEMPOTENCY_TTL_SECONDS must be an integer from 1 to 31536000; got "0"$/,
    ],
    [
      'a window in minutes',
      { IDEMPOTENCY_STORE: 'redis://cache:6379', IDEMPOTENCY_TTL_SECONDS: '60m' },
      /^IDEMPOTENCY_TTL_SECONDS must be an integer .*; got "60m"$/,
    ],
    ['a window with no store', { IDEMPOTENCY_TTL_SECONDS: '600' }, /^IDEMPOTENCY_TTL_SECONDS is set but IDEMPOTENCY_STORE is not/],
    [
      'a password secret with no store',
      { IDEMPOTENCY_STORE_SECRET_ID: 'boomerang/redis' },
      /^IDEMPOTENCY_STORE_SECRET_ID is set but IDEMPOTENCY_STORE is not: .*or unset IDEMPOTENCY_STORE_SECRET_ID$/,
    ],
    [
      'a password secret for a DynamoDB table',
      { IDEMPOTENCY_STORE: 'dynamodb:orders-idempotency', IDEMPOTENCY_STORE_SECRET_ID: 'boomerang/redis' },
      /^IDEMPOTENCY_STORE_SECRET_ID names a Redis password secret \(boomerang\/redis\), but IDEMPOTENCY_STORE is a DynamoDB table \(dynamodb:orders-idempotency\), which takes no password/,
    ],
    [
      'a password secret and a password in the URL',
      { IDEMPOTENCY_STORE: 'redis://:hunter2@cache:6379', IDEMPOTENCY_STORE_SECRET_ID: 'boomerang/redis' },
      /^IDEMPOTENCY_STORE holds a password \(redis:\/\/:\*\*\*@cache:6379\) and IDEMPOTENCY_STORE_SECRET_ID names secret boomerang\/redis for it too: remove the password from IDEMPOTENCY_STORE/,
    ],
    [
      'a password secret and a password parameter',
      { IDEMPOTENCY_STORE: 'redis://cache:6379?db=2&password=hunter2', IDEMPOTENCY_STORE_SECRET_ID: 'boomerang/redis' },
      /^IDEMPOTENCY_STORE holds a password \(redis:\/\/cache:6379\?db=2&password=\*\*\*\) and IDEMPOTENCY_STORE_SECRET_ID names secret boomerang\/redis/,
    ],
    [
      'a secret cached too long',
      { IDEMPOTENCY_STORE: 'redis://cache:6379', IDEMPOTENCY_STORE_SECRET_ID: 'boomerang/redis', SECRET_CACHE_SECONDS: '86401' },
      /^SECRET_CACHE_SECONDS must be an integer from 0 to 86400; got "86401"$/,
    ],
  ])('rejects %s, naming the variable and the value', (_name, env, message) => {
    // Act
    const error = configError(() => idempotencyFromEnv(env, 'orders'));
    // Assess
    expect(error.message).toMatch(message);
  });

  it('never shows a Redis password in its error', () => {
    // Act
    const errors = ['redis://:hunter2@cache:6379', 'redis://cache:6379?password=hunter2'].map((url) =>
      configError(() => idempotencyFromEnv({ IDEMPOTENCY_STORE: url, IDEMPOTENCY_STORE_SECRET_ID: 'boomerang/redis' }, 'orders')),
    );
    // Assess
    for (const error of errors) expect(error.message).not.toContain('hunter2');
  });

  it('never shows a Redis password in its error (a bad URL)', () => {
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
    [
      'a key that is not a function',
      { key: 'messageId' as unknown as IdempotencyOptions['key'] },
      'Expected `key` to be a function of the message, got string',
    ],
    [
      'an unknown store kind',
      { store: { kind: 'memcached' } as unknown as IdempotencyOptions['store'] },
      "Expected the idempotency store kind to be 'redis' or 'dynamodb', got \"memcached\"",
    ],
    [
      'an http URL',
      { store: { kind: 'redis', url: 'http://cache:6379' } },
      'Expected the idempotency store URL to start with redis:// or rediss://, got "http://cache:6379"',
    ],
    [
      'an empty secret id',
      { store: { kind: 'redis', url: 'redis://cache:6379', secretId: ' ' } },
      'Expected `secretId` to be the name or ARN of a Secrets Manager secret, got " "',
    ],
    [
      'a secret cache age below 0',
      { store: { kind: 'redis', url: 'redis://cache:6379', secretId: 'boomerang/redis', secretCacheSeconds: -1 } },
      'Expected `secretCacheSeconds` to be an integer from 0 to 86400 (seconds), got -1',
    ],
    [
      'a secret and a password in the URL',
      { store: { kind: 'redis', url: 'rediss://default:hunter2@cache:6380', secretId: 'boomerang/redis' } },
      'The idempotency store URL "rediss://default:***@cache:6380" holds a password, and secret boomerang/redis gives one too: remove the password from the URL',
    ],
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
    [{ kind: 'redis', url: 'redis://cache:6379?db=1&password=s3cret' }, 'redis://cache:6379?db=1&password=***'],
    [{ kind: 'redis', url: 'rediss://cache:6380', secretId: 'boomerang/redis' }, 'rediss://cache:6380 (password from secret boomerang/redis)'],
    [{ kind: 'dynamodb', table: 'orders-idempotency', endpoint: 'http://127.0.0.1:4567' }, 'dynamodb:orders-idempotency'],
  ])('names %j without its password', (store, expected) => {
    // Act, Assess
    expect(describeStore(store)).toBe(expected);
  });
});
