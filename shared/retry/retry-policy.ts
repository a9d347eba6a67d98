import { describeRange, inRange } from '../config/option-range.js';
import { OPTIONS, type OptionSpec } from '../config/option-table.js';
import { ConfigError } from '../errors.js';

/**
 * How often and how long to retry. Every field is validated by `resolveRetryPolicy`, against its range in
 * `OPTIONS` (shared/config/option-table.ts), where its default is set too.
 */
type RetryPolicy = {
  /** Retries after the first attempt (0 to 1000); 0 disables retries (failures are parked at once). @default 5 */
  readonly maxRetries: number;
  /** Delay before the first retry; at least 1, at most `maxDelayMs`. @default 1000 */
  readonly initialDelayMs: number;
  /** Each retry waits this many times longer than the one before (1 to 100). @default 2 */
  readonly multiplier: number;
  /** No delay is ever longer than this (1 h); at most 2147483647, RabbitMQ's largest TTL. @default 3600000 */
  readonly maxDelayMs: number;
  /** Spread each delay by ± this fraction of it (0 to below 1), so a burst of failures does not come back at once. @default 0.1 */
  readonly jitter: number;
};

/** The policy's rows of the option table: range, default and variable of each field. */
const POLICY_OPTIONS = {
  maxRetries: OPTIONS.maxRetries,
  initialDelayMs: OPTIONS.initialDelayMs,
  multiplier: OPTIONS.multiplier,
  maxDelayMs: OPTIONS.maxDelayMs,
  jitter: OPTIONS.jitter,
} as const satisfies Record<keyof RetryPolicy, OptionSpec>;

/** The defaults, from the option table. */
const DEFAULT_RETRY_POLICY = {
  maxRetries: POLICY_OPTIONS.maxRetries.default,
  initialDelayMs: POLICY_OPTIONS.initialDelayMs.default,
  multiplier: POLICY_OPTIONS.multiplier.default,
  maxDelayMs: POLICY_OPTIONS.maxDelayMs.default,
  jitter: POLICY_OPTIONS.jitter.default,
} as const satisfies RetryPolicy;

const POLICY_KEYS: ReadonlySet<string> = new Set(Object.keys(POLICY_OPTIONS));

/** What a field must be, in words: the range, then why when its bound needs saying. */
function expected(option: OptionSpec): string {
  return `${describeRange(option.range)}${option.why === undefined ? '' : ` (${option.why})`}`;
}

/**
 * Applies defaults to a partial policy and validates every field eagerly.
 * @param where names the source in error messages (an env variable, a rule), e.g. "RETRY_RULES[1]".
 * @example resolveRetryPolicy({ maxRetries: 10 }) // 10 retries, 1 s × 2^n up to 1 h, ±10 %
 */
function resolveRetryPolicy(
  partial: Readonly<Partial<Record<keyof RetryPolicy, unknown>>>,
  base: RetryPolicy = DEFAULT_RETRY_POLICY,
  where = 'retry policy',
): RetryPolicy {
  for (const key of Object.keys(partial)) {
    if (!POLICY_KEYS.has(key)) throw new ConfigError(`Unknown key \`${key}\` in ${where}; expected one of ${[...POLICY_KEYS].join(', ')}`);
  }
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(partial)) if (value !== undefined) merged[key] = value;
  for (const [key, option] of Object.entries(POLICY_OPTIONS)) {
    const value = merged[key];
    if (!inRange(option.range, value)) {
      throw new ConfigError(`Expected \`${key}\` in ${where} to be ${expected(option)}, got ${JSON.stringify(value)}`);
    }
  }
  const policy = merged as RetryPolicy;
  if (policy.initialDelayMs > policy.maxDelayMs) {
    throw new ConfigError(`Expected \`initialDelayMs\` (${policy.initialDelayMs}) in ${where} to be at most \`maxDelayMs\` (${policy.maxDelayMs})`);
  }
  return Object.freeze(policy);
}

export { DEFAULT_RETRY_POLICY, POLICY_KEYS, POLICY_OPTIONS, resolveRetryPolicy };
export type { RetryPolicy };
