import { closestHint } from '../config/did-you-mean.js';
import { type Env, envOption, envString } from '../config/env.js';
import { OPTIONS } from '../config/option-table.js';
import { ConfigError, isNamedError } from '../errors.js';
import { idempotencyFromEnv, parseStore, STORE_FORMS, STORE_SECRET_VARIABLE, withStoreSecret } from './from-env.js';
import { type IdempotencyOptions, type IdempotencyStoreSpec, type ResolvedIdempotencyOptions, resolveIdempotencyOptions } from './options.js';

/**
 * Idempotency as a declared queue asks for it (`idempotency` in `defineQueue`). `true` is `{}`: every
 * field then comes from the environment. A field given here wins over its variable.
 */
type IdempotencyInCode =
  | true
  | {
      /**
       * `'redis://host:6379'`, `'rediss://…'`, `'dynamodb:<table>'`, a store spec, or `'dynamodb'`: a table
       * the stack creates for this queue (its name reaches the functions as IDEMPOTENCY_STORE).
       * @default IDEMPOTENCY_STORE
       */
      readonly store?: string | IdempotencyStoreSpec;
      /**
       * The name or ARN of a Secrets Manager secret holding the Redis store's password: the password
       * alone, or JSON `{"password": "...", "username": "..."}`. Deployed, the complete ARN: the stack
       * grants the queue's functions `secretsmanager:GetSecretValue` on it.
       * @default IDEMPOTENCY_STORE_SECRET_ID, else none
       */
      readonly storeSecretId?: string;
      /** @default IDEMPOTENCY_TTL_SECONDS, else 3600 */
      readonly ttlSeconds?: number;
      /** @default the AMQP messageId */
      readonly key?: IdempotencyOptions['key'];
      /** @default the work queue's name: the queue's pull and event functions share its keys, two queues never do */
      readonly keyPrefix?: string;
    };

/** The code's part, checked: a store given (`undefined`: from IDEMPOTENCY_STORE) and the fields given. */
type CheckedInCode = {
  readonly store: IdempotencyStoreSpec | undefined;
  /** `store: 'dynamodb'`: the stack creates the table, and IDEMPOTENCY_STORE must name a DynamoDB table. */
  readonly stackTable: boolean;
  /** The Redis password secret given in code (`undefined`: from IDEMPOTENCY_STORE_SECRET_ID). */
  readonly storeSecretId: string | undefined;
  readonly fields: Omit<IdempotencyOptions, 'store' | 'keyPrefix'> & { readonly keyPrefix: string | undefined };
};

const KEYS = ['store', 'storeSecretId', 'ttlSeconds', 'key', 'keyPrefix'];

/**
 * Checks the code's idempotency option without the environment (a typo fails at import).
 * @example checkIdempotencyInCode({ store: 'dynamodb', ttlSeconds: 86_400 }, "defineQueue('orders')").stackTable // true
 */
function checkIdempotencyInCode(given: IdempotencyInCode, source: string): CheckedInCode {
  const at = `idempotency in ${source}`;
  if (given !== true && (typeof given !== 'object' || given === null))
    throw new ConfigError(`${at} must be true or { store?, storeSecretId?, ttlSeconds?, key?, keyPrefix? }; got ${JSON.stringify(given)}`);
  const options = given === true ? {} : given;
  const unknown = Object.keys(options).find((key) => !KEYS.includes(key));
  if (unknown !== undefined) throw new ConfigError(`Unknown option ${unknown} in ${at}${closestHint(unknown, KEYS)}; expected one of ${KEYS.join(', ')}`);
  const stackTable = options.store === 'dynamodb';
  const store = options.store === undefined || stackTable ? undefined : storeOf(options.store, at);
  const { storeSecretId } = options;
  if (storeSecretId !== undefined && (typeof storeSecretId !== 'string' || storeSecretId.trim() === '')) {
    throw new ConfigError(`storeSecretId of ${at} must be the name or ARN of a Secrets Manager secret; got ${JSON.stringify(storeSecretId)}`);
  }
  const fields = { ttlSeconds: options.ttlSeconds, key: options.key, keyPrefix: options.keyPrefix };
  // Checked with a stand-in store: the real one may only be known at the first invocation.
  const checkedStore = stackTable ? ({ kind: 'dynamodb', table: 'stack-table' } as const) : (store ?? { kind: 'redis', url: 'redis://check' });
  const storeName = stackTable ? `store 'dynamodb' of ${at}` : `store of ${at}`;
  withSource(at, () =>
    resolveIdempotencyOptions({
      ...fields,
      keyPrefix: fields.keyPrefix ?? 'check',
      store: withStoreSecret({}, { value: checkedStore, name: storeName }, { value: storeSecretId, name: `storeSecretId of ${at}` }),
    }),
  );
  return { store, stackTable, storeSecretId, fields };
}

/**
 * The idempotency a function runs with: the code's option first, IDEMPOTENCY_STORE and
 * IDEMPOTENCY_TTL_SECONDS as the fallback; undefined (off) when neither asks for it. The keys are
 * prefixed with `workQueue` unless the code gives a `keyPrefix`. Errors name their source.
 * @example resolveIdempotencyConfig({ IDEMPOTENCY_STORE: 'redis://cache:6379' }, undefined, 'code', 'orders')?.keyPrefix // 'orders'
 */
function resolveIdempotencyConfig(env: Env, given: IdempotencyInCode | undefined, source: string, workQueue: string): ResolvedIdempotencyOptions | undefined {
  if (given === undefined) {
    const fromEnv = idempotencyFromEnv(env, workQueue);
    return fromEnv === undefined ? undefined : resolveIdempotencyOptions(fromEnv);
  }
  const checked = checkIdempotencyInCode(given, source);
  const at = `idempotency in ${source}`;
  const store = withStoreSecret(
    env,
    { value: checked.store ?? storeFromEnv(env, at, checked.stackTable), name: checked.store === undefined ? 'IDEMPOTENCY_STORE' : `store of ${at}` },
    secretGiven(env, checked, at),
  );
  const ttlSeconds = checked.fields.ttlSeconds ?? envOption(env, OPTIONS.idempotencyTtlSeconds);
  const keyPrefix = checked.fields.keyPrefix ?? workQueue;
  return withSource(at, () => resolveIdempotencyOptions({ ...checked.fields, ttlSeconds, keyPrefix, store }));
}

/** The Redis password secret: `storeSecretId` in code, else one in the code's store spec, else IDEMPOTENCY_STORE_SECRET_ID. */
function secretGiven(env: Env, checked: CheckedInCode, at: string): { readonly value: string | undefined; readonly name: string } {
  if (checked.storeSecretId !== undefined) return { value: checked.storeSecretId, name: `storeSecretId of ${at}` };
  if (checked.store?.kind === 'redis' && checked.store.secretId !== undefined) return { value: checked.store.secretId, name: `store.secretId of ${at}` };
  return { value: envString(env, STORE_SECRET_VARIABLE), name: STORE_SECRET_VARIABLE };
}

function storeFromEnv(env: Env, at: string, stackTable: boolean): IdempotencyStoreSpec {
  const raw = env.IDEMPOTENCY_STORE?.trim();
  if (raw === undefined || raw === '') {
    throw new ConfigError(
      stackTable
        ? `${at} asks for the stack's DynamoDB table, but IDEMPOTENCY_STORE is unset: the stack sets it when it deploys the function; elsewhere set IDEMPOTENCY_STORE=dynamodb:<table>`
        : `${at} takes its store from IDEMPOTENCY_STORE, which is unset: set it to ${STORE_FORMS}, or give idempotency.store`,
    );
  }
  const store = parseStore(raw);
  if (stackTable && store.kind !== 'dynamodb')
    throw new ConfigError(
      `${at} asks for a DynamoDB table (store: 'dynamodb'), but IDEMPOTENCY_STORE is a Redis URL: set it to dynamodb:<table>, or give the Redis URL as idempotency.store`,
    );
  return store;
}

function storeOf(store: string | IdempotencyStoreSpec, at: string): IdempotencyStoreSpec {
  if (typeof store === 'string') return parseStore(store, `store of ${at}`);
  if (typeof store !== 'object' || store === null)
    throw new ConfigError(`store of ${at} must be ${STORE_FORMS}, 'dynamodb' or { kind, ... }; got ${JSON.stringify(store)}`);
  return store;
}

/** Runs `check`, naming `at` in the ConfigError it throws (the options' own errors name only the field). */
function withSource<T>(at: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (!isNamedError<ConfigError>(error, 'ConfigError') || error.message.includes(at)) throw error;
    throw new ConfigError(`${at}: ${error.message}`, { cause: error });
  }
}

export { checkIdempotencyInCode, resolveIdempotencyConfig };
export type { IdempotencyInCode };
