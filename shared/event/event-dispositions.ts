import type { Publisher } from '../amqp/confirm-publisher.js';
import { buildParkedCopy, buildRetryCopy, type Copy } from '../message/copy-message.js';
import type { ErrorFacts, RetryDecision } from '../retry/decide-retry.js';
import { PublishError } from '../errors.js';
import { BoomerangHeader } from '../message/headers.js';
import type { Logger } from '../observability/logger.js';
import type { InvocationMetrics } from '../observability/metrics.js';
import type { DelayRoute } from '../topology/types.js';
import type { EventRecord } from './decode-event.js';

/**
 * What the event mode publishes through. There is no ack here: the event source acks the whole batch
 * when the invocation succeeds, so a disposition is done once its copy is confirmed.
 */
type EventDispositionDeps = {
  readonly publisher: Publisher;
  readonly log: Logger;
  readonly retryHeader: string;
  readonly functionName: string;
  /** Where a copy for queue `workQueue` waits `delayMs` before it is back on `workQueue`. */
  readonly delayRoute: (workQueue: string, delayMs: number) => DelayRoute;
  readonly now: () => Date;
  /** Told the delay of each confirmed retry; also the handler errors (see `settleBatch`). */
  readonly metrics?: InvocationMetrics;
};

/** A failed attempt (or an undecodable record): what was thrown and what the decision made of it. */
type EventFailure = {
  readonly retryNo: number;
  readonly error: ErrorFacts;
  readonly stack: string | undefined;
  readonly decision: RetryDecision;
};

type Planned = { readonly exchange: string; readonly routingKey: string; readonly copy: Copy; readonly delayMs?: number };

/**
 * Publishes the copy a failure needs: a retry to the delay path of the record's queue, or a park into
 * its parking lot. Resolves with what was done once the broker confirmed; rejects with the
 * `PublishError` otherwise, and the caller fails the batch. A copy whose headers are too large to
 * encode would fail forever, so it is parked lean instead (Boomerang's headers only), as in pull mode.
 */
async function disposeOfEventFailure(deps: EventDispositionDeps, record: EventRecord, failure: EventFailure): Promise<'retried' | 'parked'> {
  const { decision } = failure;
  try {
    const planned = decision.kind === 'retry' ? retryCopy(deps, record, decision) : parkedCopy(deps, record, failure, decision.reason, false);
    await publish(deps, planned);
    logOutcome(deps, record, failure, decision.kind === 'retry' ? undefined : decision.reason);
    if (planned.delayMs !== undefined) deps.metrics?.retryDelay(planned.delayMs);
    return decision.kind === 'retry' ? 'retried' : 'parked';
  } catch (error) {
    if (!(error instanceof PublishError && error.reason === 'rejected-locally')) throw error;
    const reason = `${decision.kind === 'park' ? decision.reason : 'its retry copy could not be encoded'}; user headers dropped: too large to copy`;
    await publish(deps, parkedCopy(deps, record, failure, reason, true));
    logOutcome(deps, record, failure, reason);
    return 'parked';
  }
}

/**
 * Puts an untried record back at the tail of its queue, its count and failure times untouched: the
 * event mode's nack-and-requeue, for records the invocation had no time left to handle.
 */
async function requeueEventRecord(deps: EventDispositionDeps, record: EventRecord, retryNo: number): Promise<'requeued'> {
  const { content, options } = buildRetryCopy(record.delivery, { retryHeader: deps.retryHeader, retryNo, now: deps.now() });
  const headers = { ...options.headers };
  for (const name of [BoomerangHeader.firstFailureAt, BoomerangHeader.lastFailureAt]) {
    const original = record.delivery.properties.headers?.[name];
    if (original === undefined) delete headers[name];
    else headers[name] = original;
  }
  await publish(deps, { exchange: '', routingKey: record.queue, copy: { content, options: { ...options, headers } } });
  return 'requeued';
}

function retryCopy(deps: EventDispositionDeps, record: EventRecord, decision: Extract<RetryDecision, { kind: 'retry' }>): Planned {
  const route = deps.delayRoute(record.queue, decision.delayMs);
  const copy = buildRetryCopy(record.delivery, { retryHeader: deps.retryHeader, retryNo: decision.retryNo, now: deps.now() });
  return { exchange: route.exchange, routingKey: route.routingKey, copy, delayMs: route.delayMs };
}

function parkedCopy(deps: EventDispositionDeps, record: EventRecord, failure: EventFailure, reason: string, lean: boolean): Planned {
  const copy = buildParkedCopy(record.delivery, {
    retryHeader: deps.retryHeader,
    retryNo: failure.retryNo,
    now: deps.now(),
    reason,
    errorName: failure.error.name,
    errorMessage: failure.error.message,
    errorStack: failure.stack,
    sourceQueue: record.queue,
    functionName: deps.functionName,
    withoutUserHeaders: lean,
  });
  return { exchange: '', routingKey: record.parkingQueue, copy };
}

function publish(deps: EventDispositionDeps, planned: Planned): Promise<void> {
  return deps.publisher.publish(planned.exchange, planned.routingKey, planned.copy.content, planned.copy.options);
}

function logOutcome(deps: EventDispositionDeps, record: EventRecord, failure: EventFailure, parkReason: string | undefined): void {
  if (parkReason === undefined && !deps.log.debugEnabled) return;
  const fields = { messageId: record.delivery.properties.messageId, queue: record.queue, retryNo: failure.retryNo, errorName: failure.error.name, errorMessage: failure.error.message.slice(0, 300) };
  if (parkReason !== undefined) deps.log.warn('message parked', { ...fields, reason: parkReason, parkingQueue: record.parkingQueue });
  else if (failure.decision.kind === 'retry') deps.log.debug('message retried', { ...fields, delayMs: failure.decision.delayMs });
}

export { disposeOfEventFailure, requeueEventRecord };
export type { EventDispositionDeps, EventFailure };
