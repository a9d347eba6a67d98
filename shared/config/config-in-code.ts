import { ConfigError } from '../errors.js';
import { DEFAULT_RETRY_POLICY, POLICY_OPTIONS, resolveRetryPolicy, type RetryPolicy } from '../retry/retry-policy.js';
import type { RetryRule } from '../retry/retry-rules.js';
import type { DelayMode, QueueType } from '../topology/types.js';
import type { IdempotencyInCode } from '../idempotency/in-code.js';
import type { RateLimitInCode } from './rate-limit.js';
import { envOption, envQueueName, type Env } from './env.js';
import { describeRange, inRange } from './option-range.js';
import type { AckOrder, OptionSpec, OptionValue, Tracing } from './option-table.js';

/**
 * What a declared queue gives in code (`defineQueue`): each option given replaces its environment
 * variable, which is then not read at all; the options left out fall back to the environment, then to
 * `DEFAULTS`. Errors about a value given here name it with `source`.
 */
type ConfigInCode = {
  /** How errors name where the options were given, e.g. `defineQueue('webhooks')`. */
  readonly source: string;
  readonly workQueue?: string;
  readonly parkingQueue?: string;
  readonly delayMode?: DelayMode;
  readonly delayResolutionMs?: number;
  readonly queueType?: QueueType;
  readonly retry?: Readonly<Partial<RetryPolicy>>;
  readonly rules?: readonly RetryRule[];
  readonly ackOrder?: AckOrder;
  readonly batchSize?: number;
  readonly maxMessages?: number;
  readonly concurrency?: number;
  /** One span per attempt: `'opentelemetry'` or `'xray'`. @default TRACING, else 'off' */
  readonly tracing?: Tracing;
  /** Opt-in idempotent handling (see `IdempotencyInCode`). @default IDEMPOTENCY_STORE, else off */
  readonly idempotency?: IdempotencyInCode;
  /** At most this many handler starts per second for the queue (see `RateLimitInCode`). @default RATE_LIMIT_PER_SECOND, else none */
  readonly rateLimit?: RateLimitInCode;
};

/** Each policy field from code, else from its variable; the error names the code option or the variable. */
function retryPolicy(env: Env, code: ConfigInCode): RetryPolicy {
  const given: Readonly<Partial<Record<keyof RetryPolicy, unknown>>> = code.retry ?? {};
  // A field given in code wins, so its variable is not read: a bad one it replaces cannot fail the start.
  const fromEnv = Object.fromEntries(
    Object.entries(POLICY_OPTIONS)
      .filter(([key]) => given[key as keyof RetryPolicy] === undefined)
      .map(([key, option]) => [key, envOption(env, option)]),
  );
  if (code.retry === undefined) return resolveRetryPolicy(fromEnv, DEFAULT_RETRY_POLICY, 'the BACKOFF_*/MAX_RETRIES variables');
  return resolveRetryPolicy(given, { ...DEFAULT_RETRY_POLICY, ...fromEnv }, `retry of ${code.source}`);
}

/** An option of the table that `ConfigInCode` has at its top level (`batchSize`, not `retry.jitter`). */
type TopLevelOption = OptionSpec & { readonly code: keyof ConfigInCode; readonly default: number | string };

/** Reads one setting from code when given there (its error names `<option> in <source>`), else from its variable. */
function layered(env: Env, code: ConfigInCode) {
  return {
    option: <S extends TopLevelOption>(option: S): OptionValue<S> => {
      const value = code[option.code];
      if (value === undefined) return envOption(env, option);
      const at = `${option.code} in ${code.source}`;
      const kind = option.range.type === 'choice' ? 'string' : 'number';
      if (typeof value !== kind) throw new ConfigError(`${at} must be a ${kind}; got ${JSON.stringify(value)}`);
      if (!inRange(option.range, value)) {
        // A number given in code is shown as written (0, not the "0" of a variable).
        const shown = typeof value === 'number' ? String(value) : JSON.stringify(value);
        throw new ConfigError(`${at} must be ${describeRange(option.range)}; got ${shown}${option.why === undefined ? '' : ` (${option.why})`}`);
      }
      return value as OptionValue<S>;
    },
    queueName: (key: 'workQueue' | 'parkingQueue', variable: string, fallback: string): string => {
      const value = code[key];
      if (value === undefined) return envQueueName(env, variable, fallback);
      if (typeof value !== 'string') throw new ConfigError(`${key} in ${code.source} must be a string; got ${JSON.stringify(value)}`);
      return envQueueName({ [`${key} in ${code.source}`]: value }, `${key} in ${code.source}`, fallback);
    },
  };
}

export { layered, retryPolicy };
export type { ConfigInCode };
