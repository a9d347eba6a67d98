import { backoffDelayMs } from './backoff.js';
import type { RetryPolicy } from './retry-policy.js';
import { findRule, type ResolvedRetryRule } from './retry-rules.js';

/** What to do with a message whose handler threw. */
type RetryDecision =
  | { readonly kind: 'retry'; /** The count the copy carries. */ readonly retryNo: number; readonly delayMs: number }
  | { readonly kind: 'park'; readonly reason: string };

type DecideRetryInput = {
  readonly error: unknown;
  /** Retries already made (the count the failed message carried). */
  readonly retryNo: number;
  readonly policy: RetryPolicy;
  readonly rules: readonly ResolvedRetryRule[];
  readonly messageType: string | undefined;
  readonly routingKey: string;
  /** In [0, 1): jitter comes from here, so the decision is pure. */
  readonly random: () => number;
};

/** The facts of a thrown value that the error contract reads; duck-typed, any error works. */
type ErrorFacts = { readonly name: string; readonly message: string; readonly retryable: boolean; readonly retryAfterMs: number | undefined };

/**
 * Decides retry or park. Order: `retryable === false` parks; then the first matching rule
 * (`retry: false` parks; its policy replaces the base); then the count; then the delay, no shorter
 * than a valid `retryAfterMs` (capped at the policy's max).
 */
function decideRetry(input: DecideRetryInput): RetryDecision {
  const error = errorFacts(input.error);
  if (!error.retryable) return { kind: 'park', reason: `unrecoverable error ${error.name}` };
  const rule = findRule(input.rules, { errorName: error.name, messageType: input.messageType, routingKey: input.routingKey });
  if (rule && !rule.retry) return { kind: 'park', reason: `rule RETRY_RULES[${rule.index}] says never retry` };
  const policy = rule?.policy ?? input.policy;
  if (input.retryNo >= policy.maxRetries) {
    return { kind: 'park', reason: `retries exhausted: ${input.retryNo} of ${policy.maxRetries} made` };
  }
  const retryNo = input.retryNo + 1;
  let delayMs = backoffDelayMs(retryNo, policy, input.random);
  if (error.retryAfterMs !== undefined) delayMs = Math.max(delayMs, Math.min(error.retryAfterMs, policy.maxDelayMs));
  return { kind: 'retry', retryNo, delayMs };
}

/** Reads name, message, `retryable` and `retryAfterMs` off anything a handler may throw. */
function errorFacts(thrown: unknown): ErrorFacts {
  if (typeof thrown !== 'object' || thrown === null) {
    return { name: typeof thrown, message: String(thrown), retryable: true, retryAfterMs: undefined };
  }
  const { name, message, retryable, retryAfterMs } = thrown as Record<string, unknown>;
  return {
    name: typeof name === 'string' && name !== '' ? name : 'Error',
    message: typeof message === 'string' ? message : '',
    retryable: retryable !== false,
    retryAfterMs: typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) && retryAfterMs >= 0 ? retryAfterMs : undefined,
  };
}

export { decideRetry, errorFacts };
export type { DecideRetryInput, ErrorFacts, RetryDecision };
