import { ConfigError } from '../errors.js';
import { DEFAULT_RETRY_POLICY, POLICY_OPTIONS, resolveRetryPolicy, type RetryPolicy } from '../retry/retry-policy.js';
import type { RetryRule } from '../retry/retry-rules.js';
import type { DelayMode, QueueType } from '../topology/types.js';
import type { IdempotencyInCode } from '../idempotency/in-code.js';
import type { RateLimitInCode } from './rate-limit.js';
import { envOption, envQueueName, envString, type Env } from './env.js';
import { describeRange, inRange, quoteValue } from './option-range.js';
import type { AckOrder, OptionSpec, OptionValue, Tracing } from './option-table.js';

/**
 * The options a team rarely needs: `advanced` of `defineQueue`. Each one replaces its environment
 * variable like any option in code; ranges, defaults and docs are their rows of `OPTIONS`.
 */
type AdvancedOptions = {
  /** How a retry waits: `'tiers'`, `'exact'` or `'native'` (RabbitMQ 4.3+, pull only). @default DELAY_MODE, else 'tiers' */
  readonly delayMode?: DelayMode;
  /** `exact` mode: one time unit. @default DELAY_RESOLUTION_MS, else 1000 */
  readonly delayResolutionMs?: number;
  /** `exact` mode: the prefix of the shared level exchanges and queues. @default EXACT_DELAY_PREFIX, else 'boomerang.delay' */
  readonly exactDelayPrefix?: string;
  /** Type of the delay and parking queues. @default QUEUE_TYPE, else 'quorum' */
  readonly queueType?: QueueType;
  /** Name of the count header. @default RETRY_HEADER, else 'x-retry-no' */
  readonly retryHeader?: string;
  /** Which step comes first when a message is retried or parked. @default ACK_ORDER, else 'publish-then-ack' */
  readonly ackOrder?: AckOrder;
  /** Messages taken per invocation at most. @default MAX_MESSAGES, else 10000 */
  readonly maxMessages?: number;
  /** One span per attempt: `'opentelemetry'` or `'xray'`. @default TRACING, else 'off' */
  readonly tracing?: Tracing;
  /** @default CONNECT_TIMEOUT_MS, else 5000 */
  readonly connectTimeoutMs?: number;
  /** @default PUBLISH_TIMEOUT_MS, else 10000 */
  readonly publishTimeoutMs?: number;
  /** The largest body a copy may have. @default MAX_MESSAGE_BYTES, else 16 MiB */
  readonly maxMessageBytes?: number;
  /** @default IDLE_TIMEOUT_MS, else 500 */
  readonly idleTimeoutMs?: number;
  /** The longest one attempt may take (see `OPTIONS.attemptTimeoutMs`). @default ATTEMPT_TIMEOUT_MS, else 30000 but at most half the time an invocation takes messages */
  readonly attemptTimeoutMs?: number;
  /** @default SAFETY_MARGIN_MS, else 3000 */
  readonly safetyMarginMs?: number;
  /** Local invocations only. @default BUDGET_MS, else 60000 */
  readonly budgetMs?: number;
  /** Retryable failures in a row that open the circuit breaker; 0 disables it. @default BREAKER_THRESHOLD, else 10 */
  readonly breakerThreshold?: number;
  /** Returns counted by the broker at which a delivery is parked untried; 0 disables the guard. @default CRASH_LOOP_LIMIT, else 10 */
  readonly crashLoopLimit?: number;
  /**
   * The broker's management HTTP API, where the console counts a native work queue's delayed messages.
   * @default MANAGEMENT_URL, else derived from the broker's address (see `OPTIONS.managementUrl`)
   */
  readonly managementUrl?: string;
};

/**
 * What a declared queue gives in code (`defineQueue`, its `advanced` options flattened): each option
 * given replaces its environment variable, which is then not read at all; the options left out fall
 * back to the environment, then to the defaults. Errors about a value given here name it with `source`
 * and its place in `defineQueue` (`advanced.crashLoopLimit in defineQueue('orders')`).
 */
type ConfigInCode = AdvancedOptions & {
  /** How errors name where the options were given, e.g. `defineQueue('webhooks')`. */
  readonly source: string;
  readonly workQueue?: string;
  readonly parkingQueue?: string;
  readonly retry?: Readonly<Partial<RetryPolicy>>;
  readonly rules?: readonly RetryRule[];
  readonly batchSize?: number;
  readonly concurrency?: number;
  /** Opt-in idempotent handling (see `IdempotencyInCode`). @default IDEMPOTENCY_STORE, else off */
  readonly idempotency?: IdempotencyInCode;
  /** At most this many handler starts per second for the queue (see `RateLimitInCode`). @default RATE_LIMIT_PER_SECOND, else none */
  readonly rateLimit?: RateLimitInCode;
};

/** Where an option given in `defineQueue` (`advanced.tracing`) sits in `ConfigInCode` (`['tracing']`): `advanced` is flattened. */
function pathInCode(code: string): string[] {
  const path = code.split('.');
  return path[0] === 'advanced' ? path.slice(1) : path;
}

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

/** An option of the table that `ConfigInCode` has at its top level (`batchSize`, `advanced.tracing`; not `retry.jitter`). */
type TopLevelOption = OptionSpec & { readonly code: string; readonly default: number | string };

/** Reads one setting from code when given there (its error names `<option> in <source>`), else from its variable. */
function layered(env: Env, code: ConfigInCode) {
  const given = (option: OptionSpec & { readonly code: string }): unknown => code[pathInCode(option.code)[0] as keyof ConfigInCode];
  const read = {
    option: <S extends TopLevelOption>(option: S): OptionValue<S> => {
      const value = given(option);
      if (value === undefined) return envOption(env, option);
      const at = `${option.code} in ${code.source}`;
      const kind = ['choice', 'text', 'http-url'].includes(option.range.type) ? 'string' : 'number';
      if (typeof value !== kind) throw new ConfigError(`${at} must be a ${kind}; got ${JSON.stringify(value)}`);
      if (!inRange(option.range, value)) {
        // A number given in code is shown as written (0, not the "0" of a variable).
        const shown = typeof value === 'number' ? String(value) : quoteValue(option.range, value as string);
        throw new ConfigError(`${at} must be ${describeRange(option.range)}; got ${shown}${option.why === undefined ? '' : ` (${option.why})`}`);
      }
      return value as OptionValue<S>;
    },
    /** Like `option`, for an option with no default value: undefined when neither code nor the environment gives it. */
    optional: <S extends OptionSpec & { readonly code: string }>(option: S): OptionValue<S> | undefined => {
      if (given(option) === undefined && envString(env, option.variable) === undefined) return undefined;
      // One of the two gives it, so the default is never read.
      return read.option({ ...option, default: Number.NaN }) as OptionValue<S>;
    },
    /** How errors name the source the option was read from: its place in code, else its variable. */
    where: (option: TopLevelOption): string => (given(option) === undefined ? option.variable : `${option.code} in ${code.source}`),
    queueName: (key: 'workQueue' | 'parkingQueue', variable: string, fallback: string): string => {
      const value = code[key];
      if (value === undefined) return envQueueName(env, variable, fallback);
      if (typeof value !== 'string') throw new ConfigError(`${key} in ${code.source} must be a string; got ${JSON.stringify(value)}`);
      return envQueueName({ [`${key} in ${code.source}`]: value }, `${key} in ${code.source}`, fallback);
    },
  };
  return read;
}

export { layered, pathInCode, retryPolicy };
export type { AdvancedOptions, ConfigInCode };
