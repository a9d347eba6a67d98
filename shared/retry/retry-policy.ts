import { ConfigError } from '../errors.js';

/** How often and how long to retry. Every field is validated by `resolveRetryPolicy`. */
type RetryPolicy = {
  /** Retries after the first attempt; 0 disables retries (failures are parked at once). @default 5 */
  readonly maxRetries: number;
  /** Delay before the first retry; at least 1. @default 1000 */
  readonly initialDelayMs: number;
  /** Each retry waits this many times longer than the one before. @default 2 */
  readonly multiplier: number;
  /** No delay is ever longer than this (1 h). @default 3600000 */
  readonly maxDelayMs: number;
  /** Spread each delay by ± this fraction of it, so a burst of failures does not come back at once. @default 0.1 */
  readonly jitter: number;
};

/** The defaults, in one place. */
const DEFAULT_RETRY_POLICY = {
  maxRetries: 5,
  initialDelayMs: 1000,
  multiplier: 2,
  maxDelayMs: 3_600_000,
  jitter: 0.1,
} as const satisfies RetryPolicy;

/** Why an initial delay of 0 is refused; config.ts says it for BACKOFF_INITIAL_MS too. */
const ZERO_DELAY_REASON = 'with 0 every retry comes back at once: 0 × the multiplier stays 0';

type PolicyFieldRule = {
  readonly key: keyof RetryPolicy;
  readonly check: (value: number) => boolean;
  readonly expected: string;
};

const FIELD_RULES: readonly PolicyFieldRule[] = [
  { key: 'maxRetries', check: (v) => Number.isInteger(v) && v >= 0 && v <= 1000, expected: 'an integer from 0 to 1000' },
  { key: 'initialDelayMs', check: (v) => Number.isInteger(v) && v >= 1, expected: `a positive integer (${ZERO_DELAY_REASON})` },
  { key: 'multiplier', check: (v) => Number.isFinite(v) && v >= 1 && v <= 100, expected: 'a number from 1 to 100' },
  // RabbitMQ's x-message-ttl is a 32-bit signed integer of milliseconds.
  { key: 'maxDelayMs', check: (v) => Number.isInteger(v) && v >= 1 && v <= 2 ** 31 - 1, expected: 'an integer from 1 to 2147483647' },
  { key: 'jitter', check: (v) => Number.isFinite(v) && v >= 0 && v < 1, expected: 'a fraction from 0 to below 1' },
];

const POLICY_KEYS: ReadonlySet<string> = new Set(FIELD_RULES.map((rule) => rule.key));

/**
 * Applies defaults to a partial policy and validates every field eagerly.
 * @param where names the source in error messages (an env variable, a rule), e.g. "RETRY_RULES[1]".
 * @example resolveRetryPolicy({ maxRetries: 10 }) // 10 retries, 1 s × 2^n up to 1 h, ±10 %
 */
function resolveRetryPolicy(partial: Readonly<Partial<Record<keyof RetryPolicy, unknown>>>, base: RetryPolicy = DEFAULT_RETRY_POLICY, where = 'retry policy'): RetryPolicy {
  for (const key of Object.keys(partial)) {
    if (!POLICY_KEYS.has(key)) throw new ConfigError(`Unknown key \`${key}\` in ${where}; expected one of ${[...POLICY_KEYS].join(', ')}`);
  }
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(partial)) if (value !== undefined) merged[key] = value;
  for (const { key, check, expected } of FIELD_RULES) {
    const value = merged[key];
    if (typeof value !== 'number' || !check(value)) {
      throw new ConfigError(`Expected \`${key}\` in ${where} to be ${expected}, got ${JSON.stringify(value)}`);
    }
  }
  const policy = merged as RetryPolicy;
  if (policy.initialDelayMs > policy.maxDelayMs) {
    throw new ConfigError(`Expected \`initialDelayMs\` (${policy.initialDelayMs}) in ${where} to be at most \`maxDelayMs\` (${policy.maxDelayMs})`);
  }
  return Object.freeze(policy);
}

export { DEFAULT_RETRY_POLICY, POLICY_KEYS, resolveRetryPolicy, ZERO_DELAY_REASON };
export type { RetryPolicy };
