import { ConfigError } from '../errors.js';
import { DEFAULT_RETRY_POLICY, resolveRetryPolicy, type RetryPolicy, ZERO_DELAY_REASON } from '../retry/retry-policy.js';
import type { RetryRule } from '../retry/retry-rules.js';
import type { DelayMode, QueueType } from '../topology/types.js';
import type { IdempotencyInCode } from '../idempotency/in-code.js';
import type { AckOrder } from './config.js';
import { envChoice, envInt, envNumber, envQueueName, type Env } from './env.js';

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
  /** Opt-in idempotent handling (see `IdempotencyInCode`). @default IDEMPOTENCY_STORE, else off */
  readonly idempotency?: IdempotencyInCode;
};

/** The retry policy's variables, by policy field. */
const POLICY_VARIABLES = {
  maxRetries: 'MAX_RETRIES',
  initialDelayMs: 'BACKOFF_INITIAL_MS',
  multiplier: 'BACKOFF_MULTIPLIER',
  maxDelayMs: 'BACKOFF_MAX_MS',
  jitter: 'BACKOFF_JITTER',
} as const satisfies Record<keyof RetryPolicy, string>;

/** Each policy field from code, else from its variable; the error names the code option or the variable. */
function retryPolicy(env: Env, code: ConfigInCode): RetryPolicy {
  const given: Readonly<Partial<Record<keyof RetryPolicy, unknown>>> = code.retry ?? {};
  const d = DEFAULT_RETRY_POLICY;
  const v = POLICY_VARIABLES;
  // A field given in code wins, so its variable is not read: a bad one it replaces cannot fail the start.
  const readers: Record<keyof RetryPolicy, () => number> = {
    maxRetries: () => envInt(env, v.maxRetries, d.maxRetries, 0, 1000),
    initialDelayMs: () => envInt(env, v.initialDelayMs, d.initialDelayMs, 1, 2 ** 31 - 1, ZERO_DELAY_REASON),
    multiplier: () => envNumber(env, v.multiplier, d.multiplier, 1, 100),
    maxDelayMs: () => envInt(env, v.maxDelayMs, d.maxDelayMs, 1, 2 ** 31 - 1),
    jitter: () => envNumber(env, v.jitter, d.jitter, 0, 0.99),
  };
  const fromEnv = Object.fromEntries(Object.entries(readers).filter(([key]) => given[key as keyof RetryPolicy] === undefined).map(([key, read]) => [key, read()]));
  if (code.retry === undefined) return resolveRetryPolicy(fromEnv, d, 'the BACKOFF_*/MAX_RETRIES variables');
  return resolveRetryPolicy(given, { ...d, ...fromEnv }, `retry of ${code.source}`);
}

/** Reads one setting from code when given there (its error names `<option> in <source>`), else from its variable. */
function layered(env: Env, code: ConfigInCode) {
  const fromCode = (key: keyof ConfigInCode, kind: 'number' | 'string'): Env | undefined => {
    const value = code[key];
    if (value === undefined) return undefined;
    if (typeof value !== kind) throw new ConfigError(`${key} in ${code.source} must be a ${kind}; got ${JSON.stringify(value)}`);
    return { [`${key} in ${code.source}`]: String(value) };
  };
  const pick = (key: keyof ConfigInCode, variable: string, kind: 'number' | 'string'): [Env, string] => {
    const given = fromCode(key, kind);
    return given === undefined ? [env, variable] : [given, `${key} in ${code.source}`];
  };
  return {
    int: (key: keyof ConfigInCode, variable: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
      const value = code[key];
      // A number given in code is shown as written (0, not the "0" of a variable).
      if (typeof value === 'number' && (!Number.isSafeInteger(value) || value < min || value > max)) {
        throw new ConfigError(`${key} in ${code.source} must be an integer from ${min} to ${max}; got ${value}`);
      }
      return envInt(...pick(key, variable, 'number'), fallback, min, max);
    },
    choice: <T extends string>(key: keyof ConfigInCode, variable: string, choices: readonly T[], fallback: T): T => envChoice(...pick(key, variable, 'string'), choices, fallback),
    queueName: (key: keyof ConfigInCode, variable: string, fallback: string): string => envQueueName(...pick(key, variable, 'string'), fallback),
  };
}

export { layered, retryPolicy };
export type { ConfigInCode };
