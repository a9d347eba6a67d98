/**
 * A failed attempt as the copy path takes it (from a verdict: `failureOf`), and what a log line says
 * of it and of its delivery. Shared by every mode's settlement; the copy it needs is failure-copy.ts.
 */
import type { Verdict } from '../core/verdict.js';
import type { Delivery } from '../message/copy-message.js';
import type { LogFields } from '../observability/logger.js';
import type { ErrorFacts, RetryDecision } from '../retry/decide-retry.js';

/** A failed attempt: what the handler threw, and what the decision made of it. */
type Failure = {
  readonly delivery: Delivery;
  readonly retryNo: number;
  readonly error: ErrorFacts;
  readonly stack: string | undefined;
  readonly decision: RetryDecision;
  /** Not a failure: never tried because the circuit breaker opened; the copy keeps the count. */
  readonly deferred?: boolean;
};

/** A verdict that needs a copy, as the copy path takes it. */
type CopyVerdict = Extract<Verdict, { kind: 'retry' | 'park' | 'defer' }>;

/** The failure a copy verdict is carried out as; it keeps the delivery's own type (pull: amqplib's, for the ledger). */
function failureOf<D extends Delivery>(delivery: D, verdict: CopyVerdict): Failure & { readonly delivery: D } {
  switch (verdict.kind) {
    case 'retry':
      return {
        delivery,
        retryNo: verdict.retryNo,
        error: verdict.error,
        stack: undefined,
        decision: { kind: 'retry', retryNo: verdict.nextRetryNo, delayMs: verdict.delayMs },
      };
    case 'park':
      return { delivery, retryNo: verdict.retryNo, error: verdict.error, stack: verdict.stack, decision: { kind: 'park', reason: verdict.reason } };
    case 'defer':
      return {
        delivery,
        retryNo: verdict.retryNo,
        error: verdict.why,
        stack: undefined,
        decision: { kind: 'retry', retryNo: verdict.retryNo, delayMs: verdict.delayMs },
        deferred: true,
      };
  }
}

/** The failure re-decided as a park (keeping a park decision's own reason unless one is given). */
function asPark(failure: Failure, reason?: string): Failure {
  if (failure.decision.kind === 'park' && reason === undefined) return failure;
  return { ...failure, deferred: false, decision: { kind: 'park', reason: reason ?? 'its retry copy could not be encoded' } };
}

/** What a log line says of a failure: its delivery, its count and its error (the message cut to 300 characters). */
function describeFailure(failure: Failure): LogFields {
  return {
    ...describeDelivery(failure.delivery),
    retryNo: failure.retryNo,
    errorName: failure.error.name,
    errorMessage: failure.error.message.slice(0, 300),
  };
}

/** What identifies a delivery in a log line: its message id and, when it has one, its W3C trace id. */
function describeDelivery(delivery: Delivery): LogFields {
  const traceparent = delivery.properties.headers?.traceparent;
  return {
    messageId: delivery.properties.messageId,
    ...(typeof traceparent === 'string' || Buffer.isBuffer(traceparent) ? { traceparent: traceparent.toString() } : {}),
  };
}

export { asPark, describeDelivery, describeFailure, failureOf };
export type { Failure };
