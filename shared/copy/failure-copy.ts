/**
 * The copy a failed attempt needs, shared by pull and event mode: a retry copy to the delay route of
 * the delivery's queue, or a parked copy into its parking lot, with the lean fallback (Boomerang's
 * headers only) when the team's headers are too large to encode, the publish and the log line. Only
 * what happens to the original after the copy (pull: ack or requeue; event: nothing, a failed copy
 * fails the batch) is left to each mode.
 */
import type { Publisher } from '../amqp/confirm-publisher.js';
import { isNamedError, type PublishError } from '../errors.js';
import { buildParkedCopy, buildRetryCopy, type Copy, type Delivery, type ParkInput } from '../message/copy-message.js';
import { BoomerangHeader } from '../message/headers.js';
import type { LogFields, Logger } from '../observability/logger.js';
import type { InvocationMetrics } from '../observability/metrics.js';
import type { DelayRoute } from '../topology/types.js';
import { asPark, describeDelivery, describeFailure, type Failure } from './failure.js';

/** Where copies of one delivery go, and what they are published and logged through. */
type CopyContext = {
  readonly publisher: Publisher;
  readonly log: Logger;
  readonly retryHeader: string;
  readonly functionName: string;
  readonly now: () => Date;
  /** The queue the delivery came from: a parked copy names it as its source. */
  readonly queue: string;
  readonly parkingQueue: string;
  /** Where a copy waits `delayMs` before it is back on `queue`. */
  readonly delayRoute: (delayMs: number) => DelayRoute;
  /** Told the delay of each confirmed retry. @default none */
  readonly metrics?: InvocationMetrics;
  /** Added to each log line about the delivery (event mode: its queue, which no child logger carries). @default none */
  readonly logFields?: LogFields;
};

type CopyOutcome = 'retried' | 'parked' | 'deferred';

/** A planned copy: where it is published, and what it counts as once confirmed. */
type Target = {
  readonly exchange: string;
  readonly routingKey: string;
  readonly copy: Copy;
  readonly outcome: CopyOutcome;
  /** What the copy waits on the delay path (after snapping to a tier); undefined for a park. */
  readonly delayMs?: number;
};

/** What is logged of a copy once it is confirmed: kept in place of the copy, its body and headers. */
type Sent = Pick<Target, 'outcome' | 'routingKey' | 'delayMs'> & { readonly parkReason?: unknown };

function sentOf(target: Target): Sent {
  return {
    outcome: target.outcome,
    routingKey: target.routingKey,
    delayMs: target.delayMs,
    parkReason: target.copy.options.headers?.[BoomerangHeader.parkReason],
  };
}

/** Why a lean parked copy (without the team's headers) was sent. */
const LEAN_TOO_LARGE = 'user headers dropped: too large to copy';
const LEAN_LAST_RESORT = 'user headers dropped: last resort after the full copy was not confirmed';

/** The copy `failure` needs; `leanNote` (why) makes it a lean park without the team's headers. */
function planCopy(ctx: CopyContext, failure: Failure, leanNote?: string): Target {
  const { delivery, decision, error } = failure;
  const now = ctx.now();
  if (decision.kind === 'retry') {
    const route = ctx.delayRoute(decision.delayMs);
    const failed = failure.deferred ? undefined : { name: error.name, message: error.message };
    const copy = buildRetryCopy(delivery, { retryHeader: ctx.retryHeader, retryNo: decision.retryNo, now, failure: failed });
    if (failure.deferred) keepFailureTimes(copy, delivery);
    return { exchange: route.exchange, routingKey: route.routingKey, copy, outcome: failure.deferred ? 'deferred' : 'retried', delayMs: route.delayMs };
  }
  const input = parkInput(ctx, failure, decision.reason, now);
  const copy = buildParkedCopy(delivery, {
    ...input,
    reason: leanNote ? `${input.reason}; ${leanNote}` : input.reason,
    withoutUserHeaders: leanNote !== undefined,
  });
  return { exchange: '', routingKey: ctx.parkingQueue, copy, outcome: 'parked' };
}

/** What a parked copy or a park note records of a failure parked for `reason`. */
function parkInput(ctx: CopyContext, failure: Failure, reason: string, now: Date): Omit<ParkInput, 'withoutUserHeaders'> {
  const { error } = failure;
  return {
    retryHeader: ctx.retryHeader,
    retryNo: failure.retryNo,
    now,
    reason,
    errorName: error.name,
    errorMessage: error.message,
    errorStack: failure.stack,
    errorFields: error.fields,
    sourceQueue: ctx.queue,
    functionName: ctx.functionName,
  };
}

/**
 * Publishes the copy `failure` needs and logs it; resolves with what was published. A copy that
 * cannot even be encoded (headers over the frame limit) would fail forever, so a lean park goes
 * instead. Rejects with the first copy's error when no copy was confirmed.
 */
function publishFailureCopy(ctx: CopyContext, failure: Failure): Promise<CopyOutcome> {
  // A promise chain, not an async function: this runs for every retry, and each async layer costs a
  // promise. A copy that cannot even be planned rejects like one the broker refused, never throws.
  let target: Target;
  try {
    target = planCopy(ctx, failure);
  } catch (error) {
    return Promise.reject(error);
  }
  // What the confirm's continuation logs, not the copy: it would hold the copy's body and headers
  // until the confirm, and the collector would promote every one.
  const sent = sentOf(target);
  return publishCopy(ctx, target).then(
    () => {
      logCopyOutcome(ctx, failure, sent);
      return sent.outcome;
    },
    (error: unknown) => publishLean(ctx, failure, error),
  );
}

/** The copy could not even be encoded (headers over the frame limit): a lean park goes instead, or the first error stands. */
async function publishLean(ctx: CopyContext, failure: Failure, error: unknown): Promise<CopyOutcome> {
  if (!(isNamedError<PublishError>(error, 'PublishError') && error.reason === 'rejected-locally')) throw error;
  const park = asPark(failure);
  const lean = planCopy(ctx, park, LEAN_TOO_LARGE);
  if (!(await tryPublishCopy(ctx, lean))) throw error;
  logCopyOutcome(ctx, park, sentOf(lean));
  return lean.outcome;
}

function publishCopy(ctx: CopyContext, target: Target): Promise<void> {
  return ctx.publisher.publish(target.exchange, target.routingKey, target.copy.content, target.copy.options);
}

async function tryPublishCopy(ctx: CopyContext, target: Target): Promise<boolean> {
  try {
    await publishCopy(ctx, target);
    return true;
  } catch {
    return false;
  }
}

/** A copy that did not fail (deferred, requeued) keeps the failure times its original had, or none. */
function keepFailureTimes(copy: Copy, delivery: Delivery): void {
  const headers = copy.options.headers ?? {};
  for (const name of [BoomerangHeader.firstFailureAt, BoomerangHeader.lastFailureAt]) {
    const before = delivery.properties.headers?.[name];
    if (before === undefined) delete headers[name];
    else headers[name] = before;
  }
}

/** Logs a confirmed copy: a park at warn, a retry or deferral at debug; tells the metrics a retry's delay. */
function logCopyOutcome(ctx: CopyContext, failure: Failure, sent: Sent): void {
  if (sent.outcome === 'parked') {
    ctx.log.warn('message parked', {
      ...describeFailure(failure),
      ...ctx.logFields,
      reason: sent.parkReason,
      parkingQueue: sent.routingKey,
    });
    return;
  }
  if (sent.outcome === 'retried' && sent.delayMs !== undefined) ctx.metrics?.retryDelay(sent.delayMs);
  // Debug fields cost more than the rest of a retry's bookkeeping: build them only to write them.
  if (!ctx.log.debugEnabled) return;
  if (sent.outcome === 'deferred') {
    ctx.log.debug('message deferred', {
      ...describeDelivery(failure.delivery),
      ...ctx.logFields,
      retryNo: failure.retryNo,
      delayMs: sent.delayMs,
      via: sent.routingKey,
    });
  } else if (failure.decision.kind === 'retry') {
    ctx.log.debug('message retried', {
      ...describeFailure(failure),
      ...ctx.logFields,
      retryNo: failure.decision.retryNo,
      delayMs: failure.decision.delayMs,
      waitMs: sent.delayMs,
      via: sent.routingKey,
    });
  }
}

export { keepFailureTimes, LEAN_LAST_RESORT, logCopyOutcome, sentOf, parkInput, planCopy, publishCopy, publishFailureCopy, tryPublishCopy };
export type { CopyContext, Target };
