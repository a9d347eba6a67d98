import type { Publisher } from '../amqp/confirm-publisher.js';
import { buildRetryCopy } from '../message/copy-message.js';
import type { ErrorFacts, RetryDecision } from '../retry/decide-retry.js';
import type { Logger } from '../observability/logger.js';
import type { InvocationMetrics } from '../observability/metrics.js';
import type { DelayRoute } from '../topology/types.js';
import { type CopyContext, keepFailureTimes, publishCopy, publishFailureCopy } from '../engine/failure-copy.js';
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

/**
 * Publishes the copy a failure needs: a retry to the delay path of the record's queue, or a park into
 * its parking lot (lean when the headers are too large to encode, as in pull mode). Resolves with
 * what was done once the broker confirmed; rejects with the `PublishError` otherwise, and the caller
 * fails the batch.
 */
async function disposeOfEventFailure(deps: EventDispositionDeps, record: EventRecord, failure: EventFailure): Promise<'retried' | 'parked'> {
  const published = await publishFailureCopy(contextOf(deps, record), { ...failure, delivery: record.delivery });
  return published.outcome === 'parked' ? 'parked' : 'retried';
}

/**
 * Sends a record the idempotency guard did not run (its key is held elsewhere, or the store failed:
 * `why`) to the delay path of its queue with the retry count it came with: the event mode's defer.
 * Counted as `deferred`; no attempt is spent, and it is never parked.
 */
async function deferEventRecord(deps: EventDispositionDeps, record: EventRecord, retryNo: number, delayMs: number, why: ErrorFacts): Promise<'deferred'> {
  const decision: RetryDecision = { kind: 'retry', retryNo, delayMs };
  await publishFailureCopy(contextOf(deps, record), { delivery: record.delivery, retryNo, error: why, stack: undefined, decision, deferred: true });
  return 'deferred';
}

/**
 * Puts an untried record back at the tail of its queue, its count and failure times untouched: the
 * event mode's nack-and-requeue, for records the invocation had no time left to handle.
 */
async function requeueEventRecord(deps: EventDispositionDeps, record: EventRecord, retryNo: number): Promise<'requeued'> {
  const copy = buildRetryCopy(record.delivery, { retryHeader: deps.retryHeader, retryNo, now: deps.now() });
  keepFailureTimes(copy, record.delivery);
  await publishCopy(contextOf(deps, record), { exchange: '', routingKey: record.queue, copy, outcome: 'deferred' });
  return 'requeued';
}

/** The copy context of one record: its own queue, parking lot and delay path. */
function contextOf(deps: EventDispositionDeps, record: EventRecord): CopyContext {
  return {
    ...deps,
    queue: record.queue,
    parkingQueue: record.parkingQueue,
    delayRoute: (delayMs) => deps.delayRoute(record.queue, delayMs),
    logFields: { queue: record.queue },
  };
}

export { deferEventRecord, disposeOfEventFailure, requeueEventRecord };
export type { EventDispositionDeps, EventFailure };
