import type { ConsumeMessage } from 'amqplib';
import { tooLargeError, type Publisher } from '../amqp/confirm-publisher.js';
import type { AckOrder } from '../config/config.js';
import { buildParkedCopy, buildRetryCopy, type Copy } from '../message/copy-message.js';
import type { ErrorFacts, RetryDecision } from '../retry/decide-retry.js';
import type { DeliveryLedger } from './delivery-ledger.js';
import { PublishError } from '../errors.js';
import { BoomerangHeader } from '../message/headers.js';
import type { Logger } from '../observability/logger.js';
import type { InvocationMetrics } from '../observability/metrics.js';
import type { DelayRoute } from '../topology/types.js';

type DispositionDeps = {
  readonly publisher: Publisher;
  readonly ledger: DeliveryLedger;
  readonly log: Logger;
  readonly delayRoute: (delayMs: number) => DelayRoute;
  readonly ackOrder: AckOrder;
  readonly retryHeader: string;
  readonly workQueue: string;
  readonly parkingQueue: string;
  readonly functionName: string;
  readonly now: () => Date;
  /**
   * Called when a copy was not confirmed and its original went back to the queue. The caller stops
   * taking messages: the requeued original would come straight back to this same invocation and hit
   * the partner again and again (the hot loop Boomerang exists to prevent).
   */
  readonly onCopyFailed: (error: Error) => void;
  /**
   * `MAX_MESSAGE_BYTES`: with ack-then-publish, a bigger message is given back before the ack, since
   * no copy of it can be sent. @default no limit
   */
  readonly maxMessageBytes?: number;
  /** Told the delay of each confirmed retry. @default none */
  readonly metrics?: InvocationMetrics;
};

/** A failed attempt: what the handler threw, and what the decision made of it. */
type Failure = {
  readonly delivery: ConsumeMessage;
  readonly retryNo: number;
  readonly error: ErrorFacts;
  readonly stack: string | undefined;
  readonly decision: RetryDecision;
  /** Not a failure: never tried because the circuit breaker opened; the copy keeps the count. */
  readonly deferred?: boolean;
};

type Target = {
  readonly exchange: string;
  readonly routingKey: string;
  readonly copy: Copy;
  readonly outcome: 'retried' | 'parked' | 'deferred';
  /** What the copy waits on the delay path (after snapping to a tier); undefined for a park. */
  readonly delayMs?: number;
};

/** What a deferred message "failed" with, should ack-then-publish have to park it. */
const NOT_TRIED = { name: 'CircuitBreakerOpen', message: 'not tried: the circuit breaker opened in this invocation', retryable: true, retryAfterMs: undefined };

/**
 * Sends a delivery that was never tried (the breaker opened) to the delay path with the retry count
 * it came with, then acks it (or the reverse with ack-then-publish), counted as `deferred`. It comes
 * back after `delayMs`, to an invocation that probes the partner first.
 */
function deferUntried(deps: DispositionDeps, delivery: ConsumeMessage, retryNo: number, delayMs: number): Promise<void> {
  return disposeOfFailure(deps, { delivery, retryNo, error: NOT_TRIED, stack: undefined, decision: { kind: 'retry', retryNo, delayMs }, deferred: true });
}

/**
 * Carries out a retry or park decision. Publish-then-ack (default): the original is acked only after
 * a positive confirm, so a crash or a failed publish leaves it on the work queue (a duplicate is
 * possible, a loss is not). Ack-then-publish: the reverse (a loss is possible, a duplicate is not).
 */
async function disposeOfFailure(deps: DispositionDeps, failure: Failure): Promise<void> {
  const target = targetFor(deps, failure, undefined);
  if (deps.ackOrder === 'ack-then-publish') return ackThenPublish(deps, failure, target);
  try {
    await publish(deps, target);
  } catch (error) {
    // A copy that cannot even be encoded (headers over the frame limit) would fail forever: park it lean.
    const tooLarge = error instanceof PublishError && error.reason === 'rejected-locally';
    const lean = tooLarge ? targetFor(deps, asPark(failure), LEAN_TOO_LARGE) : undefined;
    if (lean && (await tryPublish(deps, lean))) {
      deps.ledger.ack(failure.delivery, 'parked');
      logOutcome(deps, { ...failure, decision: asPark(failure).decision }, lean);
      return;
    }
    giveBack(deps, failure, error as Error);
    return;
  }
  deps.ledger.ack(failure.delivery, target.outcome);
  logOutcome(deps, failure, target);
}

async function ackThenPublish(deps: DispositionDeps, failure: Failure, target: Target): Promise<void> {
  // No copy of it can be published: acking first would lose it for certain.
  const bodyBytes = failure.delivery.content.length;
  if (bodyBytes > (deps.maxMessageBytes ?? Number.POSITIVE_INFINITY)) {
    giveBack(deps, failure, tooLargeError(bodyBytes, deps.maxMessageBytes as number, describeTarget(target)));
    return;
  }
  if (!deps.ledger.ackAtOnce(failure.delivery)) return;
  if (await tryPublish(deps, target)) {
    deps.ledger.count(target.outcome);
    logOutcome(deps, failure, target);
    return;
  }
  // The original is gone: the parking lot is the last place the message can still be kept. Try the
  // full parked copy (for a failed retry), then a lean one without the team's headers.
  const delayed = target.outcome !== 'parked';
  const park = delayed ? asPark(failure, 'its retry copy could not be published') : asPark(failure);
  const fallbacks = [...(delayed ? [targetFor(deps, park, undefined)] : []), targetFor(deps, park, LEAN_LAST_RESORT)];
  for (const fallback of fallbacks) {
    if (await tryPublish(deps, fallback)) {
      deps.ledger.count('parked');
      logOutcome(deps, park, fallback);
      return;
    }
  }
  deps.ledger.count('lost');
  deps.log.error('message lost: acked first (ACK_ORDER=ack-then-publish), then no copy could be published', describe(failure));
  // Every further message would be lost the same way: stop taking them.
  deps.onCopyFailed(new PublishError('neither the delay path nor the parking lot confirmed a copy', 'nacked'));
}

/** The copy failed: the original goes back to the work queue untouched, and the invocation stops taking more. */
function giveBack(deps: DispositionDeps, failure: Failure, error: Error): void {
  deps.log.warn('copy not confirmed; message returned to the work queue', { ...describe(failure), reason: error.message });
  deps.ledger.requeue(failure.delivery);
  deps.onCopyFailed(error);
}

function describeTarget(target: Target): string {
  return target.exchange === '' ? `queue "${target.routingKey}"` : `exchange "${target.exchange}" with key "${target.routingKey}"`;
}

/** The failure re-decided as a park (keeping a park decision's own reason unless one is given). */
function asPark(failure: Failure, reason?: string): Failure {
  if (failure.decision.kind === 'park' && reason === undefined) return failure;
  return { ...failure, deferred: false, decision: { kind: 'park', reason: reason ?? 'its retry copy could not be encoded' } };
}

/** Why a lean parked copy (without the team's headers) was sent; undefined for a full copy. */
const LEAN_TOO_LARGE = 'user headers dropped: too large to copy';
const LEAN_LAST_RESORT = 'user headers dropped: last resort after the full copy was not confirmed';

function targetFor(deps: DispositionDeps, failure: Failure, leanNote: string | undefined): Target {
  const { delivery, decision, error, retryNo } = failure;
  const now = deps.now();
  if (decision.kind === 'retry') {
    const route = deps.delayRoute(decision.delayMs);
    const copy = buildRetryCopy(delivery, { retryHeader: deps.retryHeader, retryNo: decision.retryNo, now });
    if (failure.deferred) keepFailureTimes(copy, delivery);
    return { exchange: route.exchange, routingKey: route.routingKey, copy, outcome: failure.deferred ? 'deferred' : 'retried', delayMs: route.delayMs };
  }
  const copy = buildParkedCopy(delivery, {
    retryHeader: deps.retryHeader,
    retryNo,
    now,
    reason: leanNote ? `${decision.reason}; ${leanNote}` : decision.reason,
    errorName: error.name,
    errorMessage: error.message,
    errorStack: failure.stack,
    sourceQueue: deps.workQueue,
    functionName: deps.functionName,
    withoutUserHeaders: leanNote !== undefined,
  });
  return { exchange: '', routingKey: deps.parkingQueue, copy, outcome: 'parked' };
}

/** A deferred message did not fail: its copy keeps the failure times it had (or none). */
function keepFailureTimes(copy: Copy, delivery: ConsumeMessage): void {
  const headers = copy.options.headers ?? {};
  for (const name of [BoomerangHeader.firstFailureAt, BoomerangHeader.lastFailureAt]) {
    const before = delivery.properties.headers?.[name];
    if (before === undefined) delete headers[name];
    else headers[name] = before;
  }
}

function publish(deps: DispositionDeps, target: Target): Promise<void> {
  return deps.publisher.publish(target.exchange, target.routingKey, target.copy.content, target.copy.options);
}

async function tryPublish(deps: DispositionDeps, target: Target): Promise<boolean> {
  try {
    await publish(deps, target);
    return true;
  } catch {
    return false;
  }
}

function logOutcome(deps: DispositionDeps, failure: Failure, target: Target): void {
  if (target.outcome === 'parked') {
    deps.log.warn('message parked', { ...describe(failure), reason: target.copy.options.headers?.[BoomerangHeader.parkReason] });
    return;
  }
  if (target.outcome === 'retried' && target.delayMs !== undefined) deps.metrics?.retryDelay(target.delayMs);
  // Debug fields cost more than the rest of a retry's bookkeeping: build them only to write them.
  if (!deps.log.debugEnabled) return;
  if (target.outcome === 'deferred') {
    deps.log.debug('message deferred', { ...describeDelivery(failure.delivery), retryNo: failure.retryNo, delayMs: target.delayMs, via: target.routingKey });
  } else if (failure.decision.kind === 'retry') {
    deps.log.debug('message retried', { ...describe(failure), retryNo: failure.decision.retryNo, delayMs: failure.decision.delayMs, waitMs: target.delayMs, via: target.routingKey });
  }
}

function describe(failure: Failure): Record<string, unknown> {
  return {
    ...describeDelivery(failure.delivery),
    retryNo: failure.retryNo,
    errorName: failure.error.name,
    errorMessage: failure.error.message.slice(0, 300),
  };
}

/** What identifies a delivery in a log line: its message id and, when it has one, its W3C trace id. */
function describeDelivery(delivery: ConsumeMessage): Record<string, unknown> {
  const traceparent = delivery.properties.headers?.traceparent;
  return {
    messageId: delivery.properties.messageId,
    ...(typeof traceparent === 'string' || Buffer.isBuffer(traceparent) ? { traceparent: traceparent.toString() } : {}),
  };
}

export { deferUntried, describeDelivery, disposeOfFailure };
export type { DispositionDeps, Failure };
