import { type Env, envOption } from '../config/env.js';
import { OPTIONS } from '../config/option-table.js';
import { ConfigError } from '../errors.js';
import { describeUrl, type IdempotencyStoreSpec, redisUrlHasPassword } from './options.js';

/** The variable naming the Secrets Manager secret that holds the Redis store's password. */
const STORE_SECRET_VARIABLE = 'IDEMPOTENCY_STORE_SECRET_ID';

/** A setting and where it was given (`IDEMPOTENCY_STORE`, `store of idempotency in defineQueue('orders')`), for the errors. */
type Given<T> = { readonly value: T; readonly name: string };

/**
 * The store with its password secret, wherever each was given: the secret id and SECRET_CACHE_SECONDS
 * go onto a Redis store. Throws a ConfigError naming both settings when the secret cannot apply: the
 * store is a DynamoDB table (no password), or its URL holds a password already.
 * @example withStoreSecret({}, { value: { kind: 'redis', url: 'rediss://cache:6380' }, name: 'IDEMPOTENCY_STORE' }, { value: 'boomerang/redis', name: 'IDEMPOTENCY_STORE_SECRET_ID' })
 * // { kind: 'redis', url: 'rediss://cache:6380', secretId: 'boomerang/redis', secretCacheSeconds: 300 }
 */
function withStoreSecret(env: Env, store: Given<IdempotencyStoreSpec>, secret: Given<string | undefined>): IdempotencyStoreSpec {
  const secretId = secret.value;
  if (secretId === undefined) return store.value;
  const spec = store.value;
  if (spec.kind === 'dynamodb') {
    throw new ConfigError(
      `${secret.name} names a Redis password secret (${secretId}), but ${store.name} is a DynamoDB table (dynamodb:${spec.table}), which takes no password: ` +
        `remove ${secret.name} (set it only where the store is Redis), or point ${store.name} at a Redis server`,
    );
  }
  if (redisUrlHasPassword(spec.url)) {
    throw new ConfigError(
      `${store.name} holds a password (${describeUrl(spec.url)}) and ${secret.name} names secret ${secretId} for it too: ` +
        `remove the password from ${store.name} and keep it in the secret only`,
    );
  }
  return { ...spec, secretId, secretCacheSeconds: spec.secretCacheSeconds ?? envOption(env, OPTIONS.secretCacheSeconds) };
}

export { STORE_SECRET_VARIABLE, withStoreSecret };
