/**
 * A queue's rate limit: at most `perSecond` handler starts per second, across every invocation that
 * runs on the queue. Read from `rateLimit` in code, else RATE_LIMIT_PER_SECOND; RATE_LIMIT_SHARES and
 * RATE_LIMIT_STORE say how the invocations split it (docs/handlers.md, "Pacing a queue").
 */
import { closestHint } from './did-you-mean.js';
import { ConfigError } from '../errors.js';
import { describeUrl, type IdempotencyStoreSpec, redisUrlHasPassword, type ResolvedIdempotencyOptions } from '../idempotency/options.js';
import { type Env, envOption, envString, envValue } from './env.js';
import { describeRange, inRange } from './option-range.js';
import { OPTIONS } from './option-table.js';

/** `rateLimit` of `defineQueue`. */
type RateLimitInCode = {
  /**
   * Handler starts per second at most, for the whole queue (fractions too: 0.5 is one start every 2 s).
   * @default RATE_LIMIT_PER_SECOND, else no limit
   */
  readonly perSecond: number;
  /**
   * The Redis holding the queue's token bucket (`redis://…`, `rediss://…`, without a password), which makes the limit exact.
   * @default RATE_LIMIT_STORE, else the idempotency store when it is Redis, else none: each invocation takes its share
   */
  readonly store?: string;
};

/** A Redis server holding the queues' token buckets: the idempotency store's, or RATE_LIMIT_STORE. */
type RateStoreSpec = Omit<Extract<IdempotencyStoreSpec, { kind: 'redis' }>, 'kind'> & {
  /** Where it was named, for the logs: RATE_LIMIT_STORE, `rateLimit.store` in code, or the queue's idempotency store. */
  readonly from: 'RATE_LIMIT_STORE' | 'rateLimit.store' | 'idempotency';
};

/** The rate limit as an invocation applies it. */
type ResolvedRateLimit = {
  readonly perSecond: number;
  /**
   * How many invocations of the queue can run at once (RATE_LIMIT_SHARES; the stack sets it). Without
   * a store each invocation starts at most `perSecond / shares` handlers per second. @default 1
   */
  readonly shares: number;
  /** The Redis whose token bucket every invocation shares (exact); undefined: each takes its share. */
  readonly store: RateStoreSpec | undefined;
};

const KEYS = ['perSecond', 'store'];

/**
 * The queue's rate limit, or undefined when neither the code nor RATE_LIMIT_PER_SECOND sets one.
 * RATE_LIMIT_SHARES and RATE_LIMIT_STORE are checked whenever they are set (a typo fails the start),
 * and a Redis idempotency store doubles as the limit's store unless RATE_LIMIT_STORE names another.
 * @example resolveRateLimit({ RATE_LIMIT_SHARES: '2' }, { perSecond: 20 }, "defineQueue('orders')", undefined)
 * // { perSecond: 20, shares: 2, store: undefined }
 */
function resolveRateLimit(
  env: Env,
  inCode: RateLimitInCode | undefined,
  source: string,
  idempotency: ResolvedIdempotencyOptions | undefined,
): ResolvedRateLimit | undefined {
  const shares = envOption(env, OPTIONS.rateLimitShares);
  const named = inCode?.store === undefined ? rateStoreFromEnv(env) : rateStoreInCode(inCode.store, source);
  const perSecond = inCode === undefined ? perSecondFromEnv(env) : perSecondInCode(inCode, source);
  if (perSecond === undefined) return undefined;
  const guardStore = idempotency?.store.kind === 'redis' ? idempotency.store : undefined;
  const store =
    named ??
    (guardStore === undefined
      ? undefined
      : { url: guardStore.url, secretId: guardStore.secretId, secretCacheSeconds: guardStore.secretCacheSeconds, from: 'idempotency' as const });
  return Object.freeze({ perSecond, shares, store });
}

function perSecondFromEnv(env: Env): number | undefined {
  const { variable, range } = OPTIONS.rateLimitPerSecond;
  return envString(env, variable) === undefined ? undefined : (envValue(env, variable, range, 0) as number);
}

function perSecondInCode(given: RateLimitInCode, source: string): number {
  const at = `rateLimit in ${source}`;
  if (typeof given !== 'object' || given === null || Array.isArray(given))
    throw new ConfigError(`${at} must be { perSecond, store? }; got ${JSON.stringify(given)}`);
  const unknown = Object.keys(given).find((key) => !KEYS.includes(key));
  if (unknown !== undefined)
    throw new ConfigError(
      `Unknown option ${unknown} in ${at}${closestHint(unknown, ['perSecond', 'store'])}; expected perSecond or store (RATE_LIMIT_SHARES is derived by the stack)`,
    );
  const { range } = OPTIONS.rateLimitPerSecond;
  const { perSecond } = given;
  if (typeof perSecond !== 'number') throw new ConfigError(`rateLimit.perSecond in ${source} must be a number; got ${JSON.stringify(perSecond)}`);
  if (!inRange(range, perSecond)) throw new ConfigError(`rateLimit.perSecond in ${source} must be ${describeRange(range)}; got ${String(perSecond)}`);
  return perSecond;
}

/** RATE_LIMIT_STORE: a Redis URL (its own credentials, if any), or undefined when unset. */
function rateStoreFromEnv(env: Env): RateStoreSpec | undefined {
  const raw = envString(env, 'RATE_LIMIT_STORE');
  return raw === undefined ? undefined : { url: redisUrl(raw, 'RATE_LIMIT_STORE'), from: 'RATE_LIMIT_STORE' };
}

/** `rateLimit.store` in code: a Redis URL without a password, which would be in the source and the bundle. */
function rateStoreInCode(raw: unknown, source: string): RateStoreSpec {
  const at = `rateLimit.store in ${source}`;
  if (typeof raw !== 'string') throw new ConfigError(`${at} must be a string; got ${JSON.stringify(raw)}`);
  const url = redisUrl(raw, at);
  if (redisUrlHasPassword(url)) {
    throw new ConfigError(
      `${at} must not hold a password (${describeUrl(url)}): it would be in the source and the bundle. A password from a secret comes with a Redis idempotency store (idempotency.storeSecretId)`,
    );
  }
  return { url, from: 'rateLimit.store' };
}

function redisUrl(raw: string, name: string): string {
  let protocol: string | undefined;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== 'redis:' && protocol !== 'rediss:')
    throw new ConfigError(`${name} must be redis://host:6379 or rediss://host:6380; got ${JSON.stringify(describeUrl(raw))}`);
  return raw;
}

export { resolveRateLimit };
export type { RateLimitInCode, RateStoreSpec, ResolvedRateLimit };
