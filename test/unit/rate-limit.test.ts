import { describe, expect, it } from 'vitest';
import type { Env } from '../../shared/config/env.js';
import { resolveRateLimit } from '../../shared/config/rate-limit.js';
import type { ResolvedIdempotencyOptions } from '../../shared/idempotency/options.js';
import { defineQueue } from '../../shared/queues/define-queue.js';
import { configErrorOf } from '../helpers/config-error.js';

const SOURCE = 'defineQueue("orders")';
const REDIS_GUARD = {
  store: { kind: 'redis', url: 'rediss://cache:6380', secretId: 'boomerang/redis', secretCacheSeconds: 300 },
  ttlSeconds: 3600,
  key: () => undefined,
  keyPrefix: 'orders',
} as const satisfies ResolvedIdempotencyOptions;
const DYNAMODB_GUARD = { ...REDIS_GUARD, store: { kind: 'dynamodb', table: 'orders-idem' } } as const satisfies ResolvedIdempotencyOptions;

describe('resolveRateLimit', () => {
  it.each([
    { label: 'no limit without rateLimit or RATE_LIMIT_PER_SECOND', env: {}, code: undefined, guard: undefined, expected: undefined },
    {
      label: 'the variable, one share, no store',
      env: { RATE_LIMIT_PER_SECOND: '20' },
      code: undefined,
      guard: undefined,
      expected: { perSecond: 20, shares: 1, store: undefined },
    },
    {
      label: 'a fraction from the variable',
      env: { RATE_LIMIT_PER_SECOND: '0.5', RATE_LIMIT_SHARES: '3' },
      code: undefined,
      guard: undefined,
      expected: { perSecond: 0.5, shares: 3, store: undefined },
    },
    {
      label: 'the code over the variable, which is then not read',
      env: { RATE_LIMIT_PER_SECOND: 'lots' },
      code: { perSecond: 10 },
      guard: undefined,
      expected: { perSecond: 10, shares: 1, store: undefined },
    },
    {
      label: 'the Redis idempotency store, with its password secret',
      env: { RATE_LIMIT_PER_SECOND: '20' },
      code: undefined,
      guard: REDIS_GUARD,
      expected: { perSecond: 20, shares: 1, store: { url: 'rediss://cache:6380', secretId: 'boomerang/redis', secretCacheSeconds: 300, from: 'idempotency' } },
    },
    {
      label: 'no store from a DynamoDB idempotency store',
      env: { RATE_LIMIT_PER_SECOND: '20' },
      code: undefined,
      guard: DYNAMODB_GUARD,
      expected: { perSecond: 20, shares: 1, store: undefined },
    },
    {
      label: 'RATE_LIMIT_STORE over the idempotency store',
      env: { RATE_LIMIT_PER_SECOND: '20', RATE_LIMIT_STORE: 'redis://pace:6379' },
      code: undefined,
      guard: REDIS_GUARD,
      expected: { perSecond: 20, shares: 1, store: { url: 'redis://pace:6379', from: 'RATE_LIMIT_STORE' } },
    },
    {
      label: 'a store in code, before RATE_LIMIT_STORE',
      env: { RATE_LIMIT_STORE: 'redis://other:6379' },
      code: { perSecond: 20, store: 'redis://pace:6379' },
      guard: undefined,
      expected: { perSecond: 20, shares: 1, store: { url: 'redis://pace:6379', from: 'rateLimit.store' } },
    },
    {
      label: 'RATE_LIMIT_STORE and RATE_LIMIT_SHARES alone, no limit',
      env: { RATE_LIMIT_SHARES: '2', RATE_LIMIT_STORE: 'redis://pace:6379' },
      code: undefined,
      guard: undefined,
      expected: undefined,
    },
  ])('$label', ({ env, code, guard, expected }) => {
    // Act
    const limit = resolveRateLimit(env as Env, code, SOURCE, guard);
    // Assess
    expect(limit).toEqual(expected);
  });

  it.each([
    { env: { RATE_LIMIT_PER_SECOND: '0' }, code: undefined, message: 'RATE_LIMIT_PER_SECOND must be a number from 0.001 to 10000; got "0"' },
    { env: { RATE_LIMIT_PER_SECOND: '1e3' }, code: undefined, message: 'RATE_LIMIT_PER_SECOND must be a number from 0.001 to 10000; got "1e3"' },
    { env: { RATE_LIMIT_PER_SECOND: '10001' }, code: undefined, message: 'got "10001"' },
    { env: {}, code: { perSecond: 0 }, message: `rateLimit.perSecond in ${SOURCE} must be a number from 0.001 to 10000; got 0` },
    { env: {}, code: { perSecond: Number.POSITIVE_INFINITY }, message: `rateLimit.perSecond in ${SOURCE} must be a number from 0.001 to 10000; got Infinity` },
    { env: {}, code: { perSecond: '20' }, message: `rateLimit.perSecond in ${SOURCE} must be a number; got "20"` },
    { env: {}, code: { perSecond: 20, burst: 5 }, message: `Unknown option burst in rateLimit in ${SOURCE}; expected perSecond or store` },
    { env: {}, code: 20, message: `rateLimit in ${SOURCE} must be { perSecond, store? }; got 20` },
    { env: {}, code: null, message: `rateLimit in ${SOURCE} must be { perSecond, store? }; got null` },
    { env: { RATE_LIMIT_SHARES: '0' }, code: { perSecond: 1 }, message: 'RATE_LIMIT_SHARES must be an integer from 1 to 1001; got "0"' },
    { env: { RATE_LIMIT_SHARES: '1.5' }, code: undefined, message: 'RATE_LIMIT_SHARES must be an integer from 1 to 1001; got "1.5"' },
    {
      env: {},
      code: { perSecond: 1, store: 'dynamodb:pace' },
      message: `rateLimit.store in ${SOURCE} must be redis://host:6379 or rediss://host:6380; got "dynamodb:pace"`,
    },
    {
      env: {},
      code: { perSecond: 1, store: 'redis://:s3cret@pace:6379' },
      message: `rateLimit.store in ${SOURCE} must not hold a password (redis://:***@pace:6379): it would be in the source and the bundle`,
    },
    {
      env: { RATE_LIMIT_STORE: 'dynamodb:pace' },
      code: undefined,
      message: 'RATE_LIMIT_STORE must be redis://host:6379 or rediss://host:6380; got "dynamodb:pace"',
    },
    {
      env: { RATE_LIMIT_STORE: 'redis://:s3cret@pace:6379 x' },
      code: undefined,
      message: 'RATE_LIMIT_STORE must be redis://host:6379 or rediss://host:6380; got "redis://:***@pace:6379 x"',
    },
  ])('refuses $env $code, naming the input', ({ env, code, message }) => {
    // Act
    const error = configErrorOf(() => resolveRateLimit(env as Env, code as never, SOURCE, undefined));
    // Assess
    expect(error.message).toContain(message);
  });
});

describe('defineQueue with rateLimit', () => {
  const handler = async (): Promise<void> => undefined;

  it('refuses a bad rateLimit at import, naming the queue', () => {
    // Act
    const error = configErrorOf(() => defineQueue({ name: 'orders', handler, workQueue: 'orders', rateLimit: { perSecond: -1 } }));
    // Assess
    expect(error.message).toBe(`rateLimit.perSecond in ${SOURCE} must be a number from 0.001 to 10000; got -1`);
  });

  it('gives the limit in code to both functions, the shares from the environment, and names a variable it replaces', () => {
    // Prepare
    const { queue } = defineQueue({ name: 'orders', handler, workQueue: 'orders', rateLimit: { perSecond: 20 }, deploy: { modes: ['event'] } });
    const env = { RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_SHARES: '2' };
    // Act
    const config = queue.loadConfig(env, 'event');
    const overrides = queue.overrides(env);
    // Assess
    expect(config.rateLimit).toEqual({ perSecond: 20, shares: 2, store: undefined });
    expect(overrides).toEqual([{ variable: 'RATE_LIMIT_PER_SECOND', envValue: '5', fileValue: '20', option: `rateLimit.perSecond in ${SOURCE}` }]);
  });
});
