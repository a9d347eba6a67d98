import type { ConsumeMessage } from 'amqplib';
import { tooLargeError } from '../amqp/confirm-publisher.js';
import type { AckOrder } from '../config/config.js';
import { PublishError } from '../errors.js';
import type { DeliveryLedger } from './delivery-ledger.js';
import { type CopyContext, LEAN_LAST_RESORT, logCopyOutcome, planCopy, publishFailureCopy, sentOf, type Target, tryPublishCopy } from '../copy/failure-copy.js';
import { asPark, describeFailure, type Failure } from '../copy/failure.js';

/**
 * What pull mode settles through: the copy's context (built once per invocation: this runs for every
 * failed message), plus the ledger that acks and requeues originals.
 */
type PullSettleDeps = Omit<CopyContext, 'logFields'> & {
  readonly ledger: DeliveryLedger;
  readonly ackOrder: AckOrder;
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
};

/** A pull-mode failure: the delivery is amqplib's, for the ledger. */
type PullFailure = Failure & { readonly delivery: ConsumeMessage };

/**
 * Carries out a retry or park decision. Publish-then-ack (default): the original is acked only after
 * a positive confirm, so a crash or a failed publish leaves it on the work queue (a duplicate is
 * possible, a loss is not). Ack-then-publish: the reverse (a loss is possible, a duplicate is not).
 */
function settleFailure(deps: PullSettleDeps, failure: PullFailure): Promise<void> {
  if (deps.ackOrder === 'ack-then-publish') return ackThenPublish(deps, failure);
  // A promise chain, not an async function: this runs for every failed message.
  return publishFailureCopy(deps, failure).then(
    (outcome) => void deps.ledger.ack(failure.delivery, outcome),
    (error: unknown) => giveBack(deps, failure, error as Error),
  );
}

async function ackThenPublish(deps: PullSettleDeps, failure: PullFailure): Promise<void> {
  const target = planCopy(deps, failure);
  // No copy of it can be published: acking first would lose it for certain.
  const bodyBytes = failure.delivery.content.length;
  if (bodyBytes > (deps.maxMessageBytes ?? Number.POSITIVE_INFINITY)) {
    giveBack(deps, failure, tooLargeError(bodyBytes, deps.maxMessageBytes as number, describeTarget(target)));
    return;
  }
  if (!deps.ledger.ackAtOnce(failure.delivery)) return;
  if (await tryPublishCopy(deps, target)) {
    deps.ledger.count(failure.delivery, target.outcome);
    logCopyOutcome(deps, failure, sentOf(target));
    return;
  }
  // The original is gone: the parking lot is the last place the message can still be kept. Try the
  // full parked copy (for a failed retry), then a lean one without the team's headers.
  const delayed = target.outcome !== 'parked';
  const park = delayed ? asPark(failure, 'its retry copy could not be published') : asPark(failure);
  const fallbacks = [...(delayed ? [planCopy(deps, park)] : []), planCopy(deps, park, LEAN_LAST_RESORT)];
  for (const fallback of fallbacks) {
    if (await tryPublishCopy(deps, fallback)) {
      deps.ledger.count(failure.delivery, 'parked', delayed ? 'its retry copy could not be published: parked instead' : undefined);
      logCopyOutcome(deps, park, sentOf(fallback));
      return;
    }
  }
  deps.ledger.count(failure.delivery, 'lost', 'acked first (ACK_ORDER=ack-then-publish), then no copy could be published');
  deps.log.error('message lost: acked first (ACK_ORDER=ack-then-publish), then no copy could be published', describeFailure(failure));
  // Every further message would be lost the same way: stop taking them.
  deps.onCopyFailed(new PublishError('neither the delay path nor the parking lot confirmed a copy', 'nacked'));
}

/** The copy failed: the original goes back to the work queue untouched, and the invocation stops taking more. */
function giveBack(deps: PullSettleDeps, failure: PullFailure, error: Error): void {
  deps.log.warn('copy not confirmed; message returned to the work queue', { ...describeFailure(failure), reason: error.message });
  deps.ledger.requeue(failure.delivery, `copy not confirmed (${error.message}): given back to the work queue`);
  deps.onCopyFailed(error);
}

function describeTarget(target: Target): string {
  return target.exchange === '' ? `queue "${target.routingKey}"` : `exchange "${target.exchange}" with key "${target.routingKey}"`;
}

export { settleFailure };
export type { PullSettleDeps, PullFailure as Failure };
