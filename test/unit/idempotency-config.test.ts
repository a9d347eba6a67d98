import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { ConfigError } from '../../shared/errors.js';
import { type IdempotencyInCode, resolveIdempotencyConfig } from '../../shared/idempotency/in-code.js';
import { defineQueue } from '../../shared/queues/define-queue.js';

const SOURCE = "defineQueue('orders')";
const handler = async (): Promise<void> => undefined;
const byOrderId = (m: { body: Buffer }): string => String((JSON.parse(m.body.toString()) as { orderId: number }).orderId);

describe('Function: resolveIdempotencyConfig', () => {
  describe.each([
    { title: 'off when neither code nor environment asks', given: undefined, env: {}, expected: undefined },
    {
      title: 'the environment alone',
      given: undefined,
      env: { IDEMPOTENCY_STORE: 'redis://cache:6379', IDEMPOTENCY_TTL_SECONDS: '600' },
      expected: { store: { kind: 'redis', url: 'redis://cache:6379' }, ttlSeconds: 600, keyPrefix: 'orders' },
    },
    {
      title: 'true takes every field from the environment',
      given: true,
      env: { IDEMPOTENCY_STORE: 'dynamodb:orders-idem' },
      expected: { store: { kind: 'dynamodb', table: 'orders-idem' }, ttlSeconds: 3600 },
    },
    {
      title: 'the store and window in code win over the variables',
      given: { store: 'rediss://cache:6380', ttlSeconds: 86_400 },
      env: { IDEMPOTENCY_STORE: 'dynamodb:other', IDEMPOTENCY_TTL_SECONDS: '60' },
      expected: { store: { kind: 'redis', url: 'rediss://cache:6380' }, ttlSeconds: 86_400 },
    },
    {
      title: "store 'dynamodb' takes the stack's table from IDEMPOTENCY_STORE",
      given: { store: 'dynamodb', keyPrefix: 'orders' },
      env: { IDEMPOTENCY_STORE: 'dynamodb:Stack-OrdersIdem-1' },
      expected: { store: { kind: 'dynamodb', table: 'Stack-OrdersIdem-1' }, keyPrefix: 'orders' },
    },
    {
      title: 'a store spec object in code',
      given: { store: { kind: 'dynamodb', table: 'orders-idem', endpoint: 'http://127.0.0.1:8000' } },
      env: {},
      expected: { store: { kind: 'dynamodb', table: 'orders-idem', endpoint: 'http://127.0.0.1:8000' } },
    },
    {
      title: 'storeSecretId in code, with the store in code',
      given: { store: 'rediss://cache:6380', storeSecretId: 'boomerang/redis' },
      env: { SECRET_CACHE_SECONDS: '30' },
      expected: { store: { kind: 'redis', url: 'rediss://cache:6380', secretId: 'boomerang/redis', secretCacheSeconds: 30 } },
    },
    {
      title: 'storeSecretId in code wins over the variable',
      given: { storeSecretId: 'code/redis' },
      env: { IDEMPOTENCY_STORE: 'redis://cache:6379', IDEMPOTENCY_STORE_SECRET_ID: 'env/redis' },
      expected: { store: { kind: 'redis', url: 'redis://cache:6379', secretId: 'code/redis', secretCacheSeconds: 300 } },
    },
    {
      title: 'true takes the secret from IDEMPOTENCY_STORE_SECRET_ID',
      given: true,
      env: { IDEMPOTENCY_STORE: 'redis://cache:6379', IDEMPOTENCY_STORE_SECRET_ID: 'env/redis' },
      expected: { store: { kind: 'redis', url: 'redis://cache:6379', secretId: 'env/redis' } },
    },
    {
      title: "a secret in the code's store spec",
      given: { store: { kind: 'redis', url: 'redis://cache:6379', secretId: 'spec/redis' } },
      env: { IDEMPOTENCY_STORE_SECRET_ID: 'env/redis' },
      expected: { store: { kind: 'redis', url: 'redis://cache:6379', secretId: 'spec/redis', secretCacheSeconds: 300 } },
    },
  ] as const)('$title', ({ given, env, expected }) => {
    it('resolves to the expected options', () => {
      // Act
      const resolved = resolveIdempotencyConfig(env, given as IdempotencyInCode | undefined, SOURCE, 'orders');
      // Assess
      if (expected === undefined) expect(resolved).toBeUndefined();
      else expect(resolved).toMatchObject(expected);
    });
  });

  describe.each([
    { title: 'true without IDEMPOTENCY_STORE', given: true, env: {}, error: `idempotency in ${SOURCE} takes its store from IDEMPOTENCY_STORE, which is unset` },
    {
      title: "store 'dynamodb' without the stack's variable",
      given: { store: 'dynamodb' },
      env: {},
      error: "asks for the stack's DynamoDB table, but IDEMPOTENCY_STORE is unset",
    },
    {
      title: "store 'dynamodb' with a Redis URL in the variable",
      given: { store: 'dynamodb' },
      env: { IDEMPOTENCY_STORE: 'redis://cache:6379' },
      error: 'but IDEMPOTENCY_STORE is a Redis URL',
    },
    { title: 'a bad store string in code', given: { store: 'memcached://x' }, env: {}, error: `store of idempotency in ${SOURCE} must be redis://host:6379` },
    {
      title: 'a bad window in code',
      given: { store: 'redis://cache:6379', ttlSeconds: 0 },
      env: {},
      error: `idempotency in ${SOURCE}: Expected \`ttlSeconds\` to be an integer from 1`,
    },
    { title: 'an unknown field', given: { store: 'redis://cache:6379', ttl: 5 }, env: {}, error: `Unknown option ttl in idempotency in ${SOURCE}` },
    { title: 'a bad variable', given: undefined, env: { IDEMPOTENCY_STORE: 'nowhere' }, error: 'IDEMPOTENCY_STORE must be redis://host:6379' },
    {
      title: 'a bad window variable under true',
      given: true,
      env: { IDEMPOTENCY_STORE: 'redis://cache:6379', IDEMPOTENCY_TTL_SECONDS: 'soon' },
      error: 'IDEMPOTENCY_TTL_SECONDS',
    },
    { title: 'a password never shown', given: { store: 'redis://u:hunter2@cache:6379', ttlSeconds: -1 }, env: {}, error: 'ttlSeconds' },
    {
      title: 'storeSecretId with a DynamoDB table in code',
      given: { store: 'dynamodb:orders-idem', storeSecretId: 'boomerang/redis' },
      env: {},
      error: `storeSecretId of idempotency in ${SOURCE} names a Redis password secret (boomerang/redis), but store of idempotency in ${SOURCE} is a DynamoDB table (dynamodb:orders-idem), which takes no password`,
    },
    {
      title: "storeSecretId with the stack's table",
      given: { store: 'dynamodb', storeSecretId: 'boomerang/redis' },
      env: { IDEMPOTENCY_STORE: 'dynamodb:T-1' },
      error: `but store 'dynamodb' of idempotency in ${SOURCE} is a DynamoDB table`,
    },
    {
      title: 'the secret variable with a DynamoDB table in code',
      given: { store: 'dynamodb:orders-idem' },
      env: { IDEMPOTENCY_STORE_SECRET_ID: 'boomerang/redis' },
      error: `IDEMPOTENCY_STORE_SECRET_ID names a Redis password secret (boomerang/redis), but store of idempotency in ${SOURCE} is a DynamoDB table`,
    },
    {
      title: "storeSecretId with a password in the code's URL",
      given: { store: 'redis://:hunter2@cache:6379', storeSecretId: 'boomerang/redis' },
      env: {},
      error: `store of idempotency in ${SOURCE} holds a password (redis://:***@cache:6379) and storeSecretId of idempotency in ${SOURCE} names secret boomerang/redis for it too`,
    },
    {
      title: 'storeSecretId with a password in IDEMPOTENCY_STORE',
      given: { storeSecretId: 'boomerang/redis' },
      env: { IDEMPOTENCY_STORE: 'redis://cache:6379?password=hunter2' },
      error: `IDEMPOTENCY_STORE holds a password (redis://cache:6379?password=***) and storeSecretId of idempotency in ${SOURCE} names secret boomerang/redis`,
    },
    {
      title: 'an empty storeSecretId',
      given: { store: 'redis://cache:6379', storeSecretId: '' },
      env: {},
      error: `storeSecretId of idempotency in ${SOURCE} must be the name or ARN of a Secrets Manager secret; got ""`,
    },
  ] as const)('$title', ({ given, env, error }) => {
    it('throws a ConfigError naming its source', () => {
      // Act
      const act = () => resolveIdempotencyConfig(env, given as unknown as IdempotencyInCode, SOURCE, 'orders');
      // Assess
      expect(act).toThrow(ConfigError);
      expect(act).toThrow(error);
      try {
        act();
      } catch (thrown) {
        expect((thrown as Error).message).not.toContain('hunter2');
      }
    });
  });
});

describe('Function: loadConfig', () => {
  it('leaves idempotency off unless asked, and keeps the key function given in code', () => {
    // Act
    const off = loadConfig({});
    const on = loadConfig({ IDEMPOTENCY_STORE: 'redis://cache:6379' }, 'orders-pull', { source: SOURCE, idempotency: { key: byOrderId as never } });
    // Assess
    expect(off.idempotency).toBeUndefined();
    expect(on.idempotency?.key({ body: Buffer.from('{"orderId":7}') } as never)).toBe('7');
  });

  it.each([
    { title: 'in code', env: {}, given: { store: 'redis://cache:6379' } },
    { title: 'from IDEMPOTENCY_STORE alone', env: { IDEMPOTENCY_STORE: 'redis://cache:6379' }, given: undefined },
    { title: 'under true', env: { IDEMPOTENCY_STORE: 'dynamodb:orders-idem' }, given: true },
  ] as const)('prefixes the keys with the work queue by default ($title), so two queues never share a key', ({ env, given }) => {
    // Act
    const prefixes = ['orders', 'invoices'].map(
      (workQueue) => loadConfig(env, `${workQueue}-pull`, { source: `defineQueue('${workQueue}')`, workQueue, idempotency: given }).idempotency?.keyPrefix,
    );
    // Assess
    expect(prefixes).toEqual(['orders', 'invoices']);
  });

  it('keeps a keyPrefix given in code', () => {
    // Act
    const config = loadConfig({}, 'orders-pull', { source: SOURCE, workQueue: 'orders', idempotency: { store: 'redis://cache:6379', keyPrefix: 'shop' } });
    // Assess
    expect(config.idempotency?.keyPrefix).toBe('shop');
  });
});

describe('Function: defineQueue with idempotency', () => {
  it("accepts store 'dynamodb' at import (the table is the stack's) and asks the stack for a table", () => {
    // Act
    const { queue } = defineQueue({ name: 'orders', handler, workQueue: 'orders', idempotency: { store: 'dynamodb', ttlSeconds: 86_400 } });
    // Assess
    expect(queue.deploy.idempotencyTable).toBe(true);
    expect(queue.loadConfig({ IDEMPOTENCY_STORE: 'dynamodb:T-1' }).idempotency).toMatchObject({
      store: { kind: 'dynamodb', table: 'T-1' },
      ttlSeconds: 86_400,
    });
  });

  it('asks for no table for a Redis store, true, or none', () => {
    // Act
    const tables = [{ store: 'redis://cache:6379' }, true, undefined].map(
      (idempotency, i) =>
        defineQueue({ name: `q${i}`, handler, workQueue: `q${i}`, idempotency: idempotency as IdempotencyInCode | undefined }).queue.deploy.idempotencyTable,
    );
    // Assess
    expect(tables).toEqual([false, false, false]);
  });

  it('fails at import on storeSecretId with a DynamoDB store, naming both', () => {
    // Act & Assess
    expect(() => defineQueue({ name: 'orders', handler, workQueue: 'orders', idempotency: { store: 'dynamodb', storeSecretId: 'boomerang/redis' } })).toThrow(
      ConfigError,
    );
    expect(() => defineQueue({ name: 'orders', handler, workQueue: 'orders', idempotency: { store: 'dynamodb', storeSecretId: 'boomerang/redis' } })).toThrow(
      'storeSecretId of idempotency in defineQueue("orders") names a Redis password secret (boomerang/redis), but store \'dynamodb\' of idempotency in defineQueue("orders") is a DynamoDB table',
    );
  });

  it('fails at import on a bad idempotency option, naming it', () => {
    // Act & Assess
    expect(() => defineQueue({ name: 'orders', handler, workQueue: 'orders', idempotency: { store: 'redis://cache:6379', keyPrefix: ' ' } })).toThrow(
      'idempotency in defineQueue("orders"): Expected `keyPrefix`',
    );
  });
});
