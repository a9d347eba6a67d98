import { ConfigError } from '../errors.js';
import { POLICY_KEYS, resolveRetryPolicy, type RetryPolicy } from './retry-policy.js';

/**
 * Per-case overrides of the retry policy, matched on the error, the message's AMQP `type` or its
 * routing key (Symfony's dynamic strategies, without a container). The first rule that matches wins.
 * @example
 * [
 *   { match: { errorName: 'ValidationError' }, retry: false },
 *   { match: { messageType: 'PartnerB' }, maxRetries: 10, maxDelayMs: 3_600_000 },
 *   { match: { routingKey: 'sms.#' }, initialDelayMs: 30_000 },
 *   { match: { errorName: 'PartnerRateLimitedError' }, pauseQueue: true },
 * ]
 */
type RetryRule = {
  /** Every given field must match; at least one field. */
  readonly match: RetryRuleMatch;
  /** `false` parks a matching failure at once. @default true */
  readonly retry?: boolean;
  /**
   * `true` pauses the whole queue on a matching failure (the partner said "slow down"), for the
   * error's `retryAfterMs`, else the message's retry delay; `false` ignores an error's own
   * `pauseQueue`. @default the error's `pauseQueue`
   */
  readonly pauseQueue?: boolean;
} & Readonly<Partial<RetryPolicy>>;

type RetryRuleMatch = {
  /** The thrown error's `name`, exactly. */
  readonly errorName?: string;
  /** The message's AMQP `type` property, exactly. */
  readonly messageType?: string;
  /** The routing key the message was first published with; AMQP topic syntax (`*` one word, `#` any). */
  readonly routingKey?: string;
};

/** A rule with its policy fully resolved against the base policy. */
type ResolvedRetryRule = {
  readonly index: number;
  readonly match: RetryRuleMatch;
  readonly retry: boolean;
  /** Undefined: the error's own `pauseQueue` decides. */
  readonly pauseQueue: boolean | undefined;
  readonly policy: RetryPolicy;
};

type MatchSubject = {
  readonly errorName: string;
  readonly messageType: string | undefined;
  readonly routingKey: string;
};

const MATCH_KEYS: ReadonlySet<string> = new Set(['errorName', 'messageType', 'routingKey']);

/**
 * Validates rules (from code, or parsed from the `RETRY_RULES` JSON) and resolves each rule's policy
 * on top of `base`. Throws `ConfigError` naming the rule and the bad field.
 */
function resolveRetryRules(rules: unknown, base: RetryPolicy, source = 'RETRY_RULES'): ResolvedRetryRule[] {
  if (!Array.isArray(rules)) throw new ConfigError(`Expected ${source} to be a JSON array of rules, got ${typeof rules}`);
  return rules.map((rule: unknown, index) => {
    const where = `${source}[${index}]`;
    if (typeof rule !== 'object' || rule === null || Array.isArray(rule)) throw new ConfigError(`Expected ${where} to be an object`);
    const { match, retry, pauseQueue, ...overrides } = rule as Record<string, unknown>;
    for (const key of Object.keys(overrides)) {
      if (!POLICY_KEYS.has(key))
        throw new ConfigError(`Unknown key \`${key}\` in ${where}; expected match, retry, pauseQueue, or a policy field (${[...POLICY_KEYS].join(', ')})`);
    }
    return Object.freeze({
      index,
      match: validateMatch(match, where),
      retry: optionalBoolean(retry, 'retry', where) ?? true,
      pauseQueue: optionalBoolean(pauseQueue, 'pauseQueue', where),
      policy: resolveRetryPolicy(overrides, base, where),
    });
  });
}

function optionalBoolean(value: unknown, key: string, where: string): boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean')
    throw new ConfigError(`Expected \`${key}\` in ${where} to be true or false, got ${JSON.stringify(value)}`);
  return value;
}

function validateMatch(match: unknown, where: string): RetryRuleMatch {
  if (typeof match !== 'object' || match === null || Array.isArray(match)) {
    throw new ConfigError(`Expected \`match\` in ${where} to be an object with errorName, messageType or routingKey`);
  }
  const entries = Object.entries(match);
  if (entries.length === 0) throw new ConfigError(`\`match\` in ${where} is empty; a rule must match on something`);
  for (const [key, value] of entries) {
    if (!MATCH_KEYS.has(key)) throw new ConfigError(`Unknown key \`match.${key}\` in ${where}; expected errorName, messageType or routingKey`);
    if (typeof value !== 'string' || value === '') throw new ConfigError(`Expected \`match.${key}\` in ${where} to be a non-empty string`);
  }
  return Object.freeze({ ...(match as RetryRuleMatch) });
}

/** The first rule whose every field matches, or undefined. */
function findRule(rules: readonly ResolvedRetryRule[], subject: MatchSubject): ResolvedRetryRule | undefined {
  return rules.find(
    ({ match }) =>
      (match.errorName === undefined || match.errorName === subject.errorName) &&
      (match.messageType === undefined || match.messageType === subject.messageType) &&
      (match.routingKey === undefined || topicMatches(match.routingKey, subject.routingKey)),
  );
}

/** AMQP topic matching: words split on '.', `*` is exactly one word, `#` is zero or more. */
function topicMatches(pattern: string, key: string): boolean {
  return matchWords(pattern.split('.'), 0, key.split('.'), 0);
}

function matchWords(pattern: string[], p: number, words: string[], w: number): boolean {
  if (p === pattern.length) return w === words.length;
  const head = pattern[p];
  if (head === '#') {
    for (let skip = w; skip <= words.length; skip++) if (matchWords(pattern, p + 1, words, skip)) return true;
    return false;
  }
  if (w === words.length) return false;
  return (head === '*' || head === words[w]) && matchWords(pattern, p + 1, words, w + 1);
}

export { findRule, resolveRetryRules, topicMatches };
export type { ResolvedRetryRule, RetryRule, RetryRuleMatch };
