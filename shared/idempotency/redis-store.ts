import { CachePersistenceLayer } from '@aws-lambda-powertools/idempotency/cache';
import type { CacheClient } from '@aws-lambda-powertools/idempotency/cache/types';
import { cacheClient } from './redis-cache-client.js';
import { type RedisLogin, redisConnector } from './redis-connection.js';
import { STORE_SECRET_VARIABLE } from './from-env.js';
import type { StoreHandle } from './store-handle.js';

/**
 * A Redis or Valkey store. The client connects on first use, not at cold start, so a function whose
 * messages carry no key never opens it; a connection the server dropped is replaced on the next call.
 * With `login`, each new connection logs in with the password of that secret (cached by `secrets`);
 * when the server refuses it, the secret is read once more, bypassing the cache, and the connection
 * tried once more: a rotated password heals itself, as the broker's does.
 * @example const { persistence, close } = createRedisStore('redis://127.0.0.1:6379');
 */
function createRedisStore(url: string, login?: RedisLogin): StoreHandle {
  const redis = redisConnector(
    url,
    login,
    {
      label: 'idempotency',
      closedMessage: 'the idempotency guard is closed',
      loginHint: `keep its password in a Secrets Manager secret and name it with ${STORE_SECRET_VARIABLE} (or idempotency.storeSecretId)`,
    },
    cacheClient,
  );

  // A command that met a dropped connection is tried once more on a fresh one: safe, because a
  // repeated SET NX finds its own record and answers "in progress" (the message comes back later),
  // and GET, SET and DEL repeat harmlessly.
  const client: CacheClient = {
    get: (name) => redis.run((cache) => cache.get(name)),
    set: (name, value, options) => redis.run((cache) => cache.set(name, value, options)),
    del: (keys) => redis.run((cache) => cache.del(keys)),
  };

  return {
    persistence: new CachePersistenceLayer({ client }),
    // Every write the guard made was awaited before its run returned, so closing cuts nothing short.
    close: async () => redis.close(),
  };
}

export { createRedisStore };
