import type { Publisher } from '../amqp/confirm-publisher.js';
import { buildRetryCopy } from '../message/copy-message.js';
import type { Outcome } from '../observability/summary.js';
import type { Verdict } from '../core/verdict.js';
import { readRetryNo } from '../message/headers.js';
import type { Logger } from '../observability/logger.js';
import type { InvocationMetrics } from '../observability/metrics.js';
import type { DelayRoute } from '../topology/types.js';
import { type CopyContext, keepFailureTimes, publishCopy, publishFailureCopy } from '../copy/failure-copy.js';
import { failureOf } from '../copy/failure.js';
import type { EventRecord } from './decode-event.js';

/**
 * What the event mode publishes through. There is no ack here: the event source acks the whole batch
 * when the invocation succeeds, so a disposition is done once its copy is confirmed.
 */
type EventSettleDeps = {
  readonly publisher: Publisher;
  readonly log: Logger;
  readonly retryHeader: string;
  readonly functionName: string;
  /** Where a copy for queue `workQueue` waits `delayMs` before it is back on `workQueue`. */
  readonly delayRoute: (workQueue: string, delayMs: number) => DelayRoute;
  readonly now: () => Date;
  /** Told the delay of each confirmed retry, and the handler errors. @default none */
  readonly metrics?: InvocationMetrics;
};

/**
 * Carries out one record's verdict: nothing for a success or a duplicate (the event source acks the
 * batch), a copy for a retry, park or deferral, and a copy to the tail of its queue for a give-back.
 * Resolves with what it counts as once the broker confirmed; rejects with the `PublishError`
 * otherwise, and the caller fails the batch.
 */
async function settleEventVerdict(deps: EventSettleDeps, record: EventRecord, verdict: Verdict): Promise<Outcome> {
  switch (verdict.kind) {
    case 'ack':
      return 'acked';
    case 'duplicate':
      return 'skippedDuplicates';
    case 'give-back':
      return requeueEventRecord(deps, record, readRetryNo(record.delivery.properties.headers, deps.retryHeader).retryNo);
    default: {
      return publishFailureCopy(contextOf(deps, record), failureOf(record.delivery, verdict));
    }
  }
}

/**
 * Puts an untried record back at the tail of its queue, its count and failure times untouched: the
 * event mode's nack-and-requeue, for records the invocation had no time left to handle.
 */
async function requeueEventRecord(deps: EventSettleDeps, record: EventRecord, retryNo: number): Promise<'requeued'> {
  const copy = buildRetryCopy(record.delivery, { retryHeader: deps.retryHeader, retryNo, now: deps.now() });
  keepFailureTimes(copy, record.delivery);
  await publishCopy(contextOf(deps, record), { exchange: '', routingKey: record.queue, copy, outcome: 'deferred' });
  return 'requeued';
}

/** The copy context of one record: its own queue, parking lot and delay path. */
function contextOf(deps: EventSettleDeps, record: EventRecord): CopyContext {
  return {
    ...deps,
    queue: record.queue,
    parkingQueue: record.parkingQueue,
    delayRoute: (delayMs) => deps.delayRoute(record.queue, delayMs),
    logFields: { queue: record.queue },
  };
}

export { requeueEventRecord, settleEventVerdict };
export type { EventSettleDeps };
