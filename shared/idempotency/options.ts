import { describeRange, inRange } from '../config/option-range.js';
import { OPTIONS } from '../config/option-table.js';
import { ConfigError } from '../errors.js';
import type { BoomerangMessage } from '../message/message.js';
import { redactUrl } from '../observability/redact.js';

/**
 * Where completed and in-progress keys are kept: a Redis or Valkey server (`rediss://` for TLS), or a
 * DynamoDB table with the key schema Powertools expects (partition key `id`, TTL on `expiration`;
 * shared/cdk/idempotency-table.ts creates it).
 */
type IdempotencyStoreSpec =
  | {
      readonly kind: 'redis';
      readonly url: string;
      /**
       * A Secrets Manager secret (name or ARN) holding the server's password: the password alone, or
       * JSON `{"password": "...", "username": "..."}` (`username` optional, for an ACL user). The URL
       * then carries no password. @default none: the URL's own credentials, if any
       */
      readonly secretId?: string;
      /** How long a warm container reuses the secret's value, in seconds. @default 300 (`OPTIONS.secretCacheSeconds`, SECRET_CACHE_SECONDS) */
      readonly secretCacheSeconds?: number;
    }
  | {
      readonly kind: 'dynamodb';
      readonly table: string;
      /** A DynamoDB-compatible endpoint (dynalite or DynamoDB Local in tests). @default the region's endpoint */
      readonly endpoint?: string;
    };

/** Turns on the idempotency guard: a message whose key already completed is acked without running the handler. */
type IdempotencyOptions = {
  readonly store: IdempotencyStoreSpec;
  /**
   * How long a completed key is remembered, in seconds: a duplicate arriving later runs the handler again.
   * @default 3600 (1 hour, as Powertools; `OPTIONS.idempotencyTtlSeconds`)
   */
  readonly ttlSeconds?: number;
  /**
   * The message's idempotency key; `undefined` or `''` means the message has none and is handled
   * unguarded (the guard answers 'no-key'). A key function that throws fails the run as a handler would.
   * @default the AMQP messageId
   */
  readonly key?: (message: BoomerangMessage) => string | undefined;
  /**
   * Prefix of every key in the store: functions that share a store and a prefix share their keys.
   * `loadConfig` gives the work queue's name when the code gives none, so the pull and event functions
   * of one queue share its keys and two queues never do.
   */
  readonly keyPrefix: string;
};

/** The options with their defaults applied and checked. */
type ResolvedIdempotencyOptions = Required<IdempotencyOptions>;

const DEFAULT_IDEMPOTENCY = { ttlSeconds: OPTIONS.idempotencyTtlSeconds.default } as const;

/** DynamoDB's table-name rule, checked here so a typo fails at start rather than on the first message. */
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;

const messageIdKey = (message: BoomerangMessage): string | undefined => message.properties.messageId as string | undefined;

/**
 * Applies the defaults and checks every field, so a bad option fails at start, naming itself.
 * @example resolveIdempotencyOptions({ store: { kind: 'redis', url: 'redis://cache:6379' }, keyPrefix: 'orders' }).ttlSeconds // 3600
 */
function resolveIdempotencyOptions(options: IdempotencyOptions): ResolvedIdempotencyOptions {
  const ttlSeconds = options.ttlSeconds ?? DEFAULT_IDEMPOTENCY.ttlSeconds;
  if (!inRange(OPTIONS.idempotencyTtlSeconds.range, ttlSeconds)) {
    throw new ConfigError(`Expected \`ttlSeconds\` to be ${describeRange(OPTIONS.idempotencyTtlSeconds.range)} (seconds), got ${String(ttlSeconds)}`);
  }
  const { keyPrefix } = options;
  if (typeof keyPrefix !== 'string' || keyPrefix.trim() === '')
    throw new ConfigError(`Expected \`keyPrefix\` to be a non-empty string, got ${JSON.stringify(keyPrefix)}`);
  if (options.key !== undefined && typeof options.key !== 'function') {
    throw new ConfigError(`Expected \`key\` to be a function of the message, got ${typeof options.key}`);
  }
  return { store: checkStore(options.store), ttlSeconds, key: options.key ?? messageIdKey, keyPrefix };
}

function checkStore(store: IdempotencyStoreSpec): IdempotencyStoreSpec {
  if (store.kind === 'redis') {
    let protocol: string;
    try {
      protocol = new URL(store.url).protocol;
    } catch {
      throw new ConfigError(`Expected the idempotency store URL to look like redis://host:6379, got ${JSON.stringify(describeUrl(store.url))}`);
    }
    if (protocol !== 'redis:' && protocol !== 'rediss:') {
      throw new ConfigError(`Expected the idempotency store URL to start with redis:// or rediss://, got ${JSON.stringify(describeUrl(store.url))}`);
    }
    checkStoreSecret(store);
    return store;
  }
  if (store.kind === 'dynamodb') {
    if (!TABLE_NAME.test(store.table)) {
      throw new ConfigError(`Expected the idempotency table name to be 3 to 255 letters, digits, '_', '-' or '.', got ${JSON.stringify(store.table)}`);
    }
    return store;
  }
  throw new ConfigError(`Expected the idempotency store kind to be 'redis' or 'dynamodb', got ${JSON.stringify((store as { kind: unknown }).kind)}`);
}

/** A Redis store's secret: a non-empty id, a cache age in range, and no second password in the URL. */
function checkStoreSecret(store: Extract<IdempotencyStoreSpec, { kind: 'redis' }>): void {
  const { secretId, secretCacheSeconds } = store;
  if (secretId === undefined) return;
  if (typeof secretId !== 'string' || secretId.trim() === '')
    throw new ConfigError(`Expected \`secretId\` to be the name or ARN of a Secrets Manager secret, got ${JSON.stringify(secretId)}`);
  if (secretCacheSeconds !== undefined && !inRange(OPTIONS.secretCacheSeconds.range, secretCacheSeconds)) {
    throw new ConfigError(
      `Expected \`secretCacheSeconds\` to be ${describeRange(OPTIONS.secretCacheSeconds.range)} (seconds), got ${String(secretCacheSeconds)}`,
    );
  }
  // Two passwords: which one the server sees would depend on the client's precedence.
  if (redisUrlHasPassword(store.url)) {
    throw new ConfigError(
      `The idempotency store URL ${JSON.stringify(describeUrl(store.url))} holds a password, and secret ${secretId} gives one too: remove the password from the URL`,
    );
  }
}

/** A `password` query parameter of a Redis URL, up to the next parameter (ioredis reads it too). */
const QUERY_PASSWORD = /([?&]password=)[^&#]*/gi;

/**
 * Whether a Redis URL carries a password: in its credentials (`redis://:pw@host`) or its `password` parameter.
 * @example redisUrlHasPassword('redis://cache:6379?password=s3cret') // true
 */
function redisUrlHasPassword(url: string): boolean {
  return redactUrl(url) !== url || new RegExp(QUERY_PASSWORD.source, 'i').test(url);
}

/** A Redis URL with both kinds of password hidden. */
function describeUrl(url: string): string {
  return redactUrl(url).replace(QUERY_PASSWORD, '$1***');
}

/**
 * The store as it may appear in logs and errors: the password of a Redis URL is hidden; a password
 * secret is named by its id.
 * @example describeStore({ kind: 'redis', url: 'rediss://cache:6380', secretId: 'boomerang/redis' }) // 'rediss://cache:6380 (password from secret boomerang/redis)'
 */
function describeStore(store: IdempotencyStoreSpec): string {
  if (store.kind === 'dynamodb') return `dynamodb:${store.table}`;
  return store.secretId === undefined ? describeUrl(store.url) : `${describeUrl(store.url)} (password from secret ${store.secretId})`;
}

export { describeStore, describeUrl, redisUrlHasPassword, resolveIdempotencyOptions };
export type { IdempotencyOptions, IdempotencyStoreSpec, ResolvedIdempotencyOptions };
