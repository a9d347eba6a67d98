/**
 * The idempotency settings from the environment, and the Redis store's password secret wherever the
 * store and the secret were given (the environment or `defineQueue`).
 */
import { type Env, envOption, envString } from '../config/env.js';
import { OPTIONS } from '../config/option-table.js';
import { ConfigError } from '../errors.js';
import { redactUrl } from '../observability/redact.js';
import { describeUrl, type IdempotencyOptions, type IdempotencyStoreSpec, redisUrlHasPassword, resolveIdempotencyOptions } from './options.js';

const STORE_FORMS = 'redis://host:6379, rediss://host:6379 or dynamodb:<table>';

/** The variable naming the Secrets Manager secret that holds the Redis store's password. */
const STORE_SECRET_VARIABLE = 'IDEMPOTENCY_STORE_SECRET_ID';

/**
 * The idempotency options the environment asks for, or undefined when `IDEMPOTENCY_STORE` is unset
 * (idempotency is opt-in). Options given in code take precedence; this is the fallback. `keyPrefix`
 * is the work queue's name (no variable sets it). IDEMPOTENCY_STORE_SECRET_ID names the secret
 * holding a Redis store's password.
 * @example idempotencyFromEnv({ IDEMPOTENCY_STORE: 'dynamodb:orders-idempotency', IDEMPOTENCY_TTL_SECONDS: '86400' }, 'orders')
 * // { store: { kind: 'dynamodb', table: 'orders-idempotency' }, ttlSeconds: 86400, keyPrefix: 'orders' }
 */
function idempotencyFromEnv(env: Env, keyPrefix: string): IdempotencyOptions | undefined {
  const raw = envString(env, 'IDEMPOTENCY_STORE');
  if (raw === undefined) {
    // A window or a password with no store is a half-done setup: say so rather than run unguarded.
    const orphan = ['IDEMPOTENCY_TTL_SECONDS', STORE_SECRET_VARIABLE].find((name) => envString(env, name) !== undefined);
    if (orphan !== undefined) {
      throw new ConfigError(
        `${orphan} is set but IDEMPOTENCY_STORE is not: set IDEMPOTENCY_STORE to ${STORE_FORMS} to turn idempotency on, or unset ${orphan}`,
      );
    }
    return undefined;
  }
  const ttlSeconds = envOption(env, OPTIONS.idempotencyTtlSeconds);
  const store = withStoreSecret(
    env,
    { value: parseStore(raw), name: 'IDEMPOTENCY_STORE' },
    { value: envString(env, STORE_SECRET_VARIABLE), name: STORE_SECRET_VARIABLE },
  );
  const options = { store, ttlSeconds, keyPrefix };
  try {
    // Validated here too, so the error names the variable rather than an option the team never wrote.
    resolveIdempotencyOptions(options);
  } catch (error) {
    throw new ConfigError(`IDEMPOTENCY_STORE must be ${STORE_FORMS}; got ${JSON.stringify(redactUrl(raw))} (${(error as Error).message})`, { cause: error });
  }
  return options;
}

/** `name` is where `raw` was given, for the error. */
function parseStore(raw: string, name = 'IDEMPOTENCY_STORE'): IdempotencyStoreSpec {
  if (/^rediss?:\/\//i.test(raw)) return { kind: 'redis', url: raw };
  if (raw.startsWith('dynamodb:')) return { kind: 'dynamodb', table: raw.slice('dynamodb:'.length) };
  throw new ConfigError(`${name} must be ${STORE_FORMS}; got ${JSON.stringify(redactUrl(raw))}`);
}

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

export { idempotencyFromEnv, parseStore, STORE_FORMS, STORE_SECRET_VARIABLE, withStoreSecret };
