import type { ConsumeMessage } from 'amqplib';
import type { Verdict } from '../core/verdict.js';
import { describeDelivery, failureOf } from '../copy/failure-copy.js';
import type { Tally } from '../core/tally.js';
import { disposeOfFailure, type DispositionDeps } from './dispositions.js';

type ParkVerdict = Extract<Verdict, { kind: 'park' }>;

/** What pull mode settles a verdict through: the copy path, the ledger, and a way to park without a copy. */
type PullSettleDeps = DispositionDeps & {
  readonly tally: Tally;
  /**
   * Parks a message no copy can carry (its body is over `MAX_MESSAGE_BYTES`): see `parkUncopyable`.
   * Resolves once it is settled one way or the other.
   */
  readonly parkUncopyable: (delivery: ConsumeMessage, verdict: ParkVerdict) => Promise<void>;
};

/**
 * Carries out the verdict of one delivery in pull mode: an ack, a copy then an ack (or the reverse
 * with ack-then-publish), a nack with requeue, or a park the broker carries out. Returns the work
 * still under way (a copy waiting for its confirm), or undefined when nothing is.
 */
function settleVerdict(deps: PullSettleDeps, delivery: ConsumeMessage, verdict: Verdict): Promise<void> | undefined {
  switch (verdict.kind) {
    case 'ack':
      if (verdict.unkeyed) deps.tally.unkeyed();
      if (deps.ledger.ack(delivery, 'acked') && deps.log.debugEnabled) deps.log.debug('message acked', describeDelivery(delivery));
      return undefined;
    case 'duplicate':
      if (deps.ledger.ack(delivery, 'skippedDuplicates') && deps.log.debugEnabled)
        deps.log.debug('duplicate acked without calling the handler: its idempotency key had completed', describeDelivery(delivery));
      return undefined;
    case 'give-back':
      deps.ledger.requeue(delivery);
      return undefined;
    case 'park':
      if (!verdict.copyable) return deps.parkUncopyable(delivery, verdict);
      return disposeOfFailure(deps, { ...failureOf(delivery, verdict), delivery });
    default:
      return disposeOfFailure(deps, { ...failureOf(delivery, verdict), delivery });
  }
}

export { settleVerdict };
export type { ParkVerdict, PullSettleDeps };
