import { backoffDelayMs } from './backoff.js';
import { messageOfObject } from './error-fields.js';
import type { RetryPolicy } from './retry-policy.js';
import { findRule, type ResolvedRetryRule } from './retry-rules.js';

/**
 * What to do with a message whose handler threw. `pauseMs`, when set, also pauses the whole queue
 * that long (the partner said "slow down"), whatever becomes of this message.
 */
type RetryDecision =
  | { readonly kind: 'retry' /** The count the copy carries. */; readonly retryNo: number; readonly delayMs: number; readonly pauseMs?: number }
  | { readonly kind: 'park'; readonly reason: string; readonly pauseMs?: number };

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
type ErrorFacts = {
  readonly name: string;
  readonly message: string;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  /** The error asks to pause the whole queue (`pauseQueue === true`). Absent: it does not. */
  readonly pauseQueue?: boolean;
  /** The JSON of its other fields (error-fields.ts), set only on a park: a retry copy records no error. */
  readonly fields?: string;
};

/**
 * Decides retry or park. Order: `retryable === false` parks; then the first matching rule
 * (`retry: false` parks; its policy replaces the base); then the count; then the delay, no shorter
 * than a valid `retryAfterMs` (capped at the policy's max). Then the pause, whatever the fate: when
 * the rule's `pauseQueue` says so (else the error's own), for `retryAfterMs` (capped at the policy's
 * max), else for the delay this message was given (a parked one: the delay its next retry would have had).
 */
function decideRetry(input: DecideRetryInput): RetryDecision {
  const error = errorFacts(input.error);
  const rule = error.retryable ? findRule(input.rules, { errorName: error.name, messageType: input.messageType, routingKey: input.routingKey }) : undefined;
  const policy = rule?.policy ?? input.policy;
  const fate = decideFate(input, error, rule, policy);
  if (!(rule?.pauseQueue ?? error.pauseQueue === true)) return fate;
  const pauseMs =
    error.retryAfterMs !== undefined
      ? Math.min(error.retryAfterMs, policy.maxDelayMs)
      : fate.kind === 'retry'
        ? fate.delayMs
        : backoffDelayMs(input.retryNo + 1, policy, input.random);
  return { ...fate, pauseMs };
}

/** Retry or park, and the retry's delay. */
function decideFate(input: DecideRetryInput, error: ErrorFacts, rule: ResolvedRetryRule | undefined, policy: RetryPolicy): RetryDecision {
  if (!error.retryable) return { kind: 'park', reason: `unrecoverable error ${error.name}` };
  if (rule && !rule.retry) return { kind: 'park', reason: `rule RETRY_RULES[${rule.index}] says never retry` };
  if (input.retryNo >= policy.maxRetries) {
    return { kind: 'park', reason: `retries exhausted: ${input.retryNo} of ${policy.maxRetries} made` };
  }
  const retryNo = input.retryNo + 1;
  let delayMs = backoffDelayMs(retryNo, policy, input.random);
  if (error.retryAfterMs !== undefined) delayMs = Math.max(delayMs, Math.min(error.retryAfterMs, policy.maxDelayMs));
  return { kind: 'retry', retryNo, delayMs };
}

/** Reads name, message, `retryable`, `retryAfterMs` and `pauseQueue` off anything a handler may throw. */
function errorFacts(thrown: unknown): ErrorFacts {
  if (typeof thrown !== 'object' || thrown === null) {
    // `null` names itself: typeof would say "object".
    return { name: thrown === null ? 'null' : typeof thrown, message: String(thrown), retryable: true, retryAfterMs: undefined };
  }
  const { name, message, retryable, retryAfterMs, pauseQueue } = thrown as Record<string, unknown>;
  const facts = {
    name: typeof name === 'string' && name !== '' ? name : 'Error',
    // A thrown object without a message (an HTTP client's `{ status, detail }`) says what it was.
    message: typeof message === 'string' ? message : messageOfObject(thrown),
    retryable: retryable !== false,
    retryAfterMs: typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) && retryAfterMs >= 0 ? retryAfterMs : undefined,
  };
  // Only `true` pauses: a truthy string or 1 from some other library's field is not the contract.
  return pauseQueue === true ? { ...facts, pauseQueue } : facts;
}

export { decideRetry, errorFacts };
export type { DecideRetryInput, ErrorFacts, RetryDecision };
