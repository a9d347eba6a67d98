import { type BrokerFailureReason, BrokerConnectionError } from '../errors.js';
import type { Summary } from '../observability/summary.js';

/**
 * A pull invocation could not finish: the connection or the channel was lost. Unsettled messages went
 * back to the work queue; `summary` is what it did up to then, its `stoppedBecause` says which was lost.
 * Its `name` is `PullAbortedError`; it is also a `BrokerConnectionError` (retryable).
 */
class PullAbortedError extends BrokerConnectionError {
  public constructor(
    message: string,
    public readonly summary: Summary,
    options?: ErrorOptions & { reason?: BrokerFailureReason },
  ) {
    super(message, options);
    this.name = 'PullAbortedError';
  }
}

export { PullAbortedError };
