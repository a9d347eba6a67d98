/**
 * The errors an invocation throws with its summary (what it did before it stopped), for every mode.
 * They live in core, not on the ground floor (shared/errors.ts), because they carry the summary.
 */
import { BoomerangError, type BrokerFailureReason, BrokerConnectionError } from '../errors.js';
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

/**
 * The delay path (or parking lot) the current config plans is missing on the broker: the config
 * changed (`MAX_RETRIES`, `BACKOFF_*`, `RETRY_RULES`, `DELAY_MODE`) after `topology apply`, or a queue
 * was deleted. Every copy would come back unroutable, so the invocation takes no message (or stops
 * at the first such copy) and fails until the topology is applied again; nothing waits on a retry.
 */
class TopologyDriftError extends BoomerangError {
  /** Queues and exchanges the config needs that the broker does not have (empty when only a copy was returned). */
  public readonly missing: readonly string[];
  /** What the invocation did before it stopped (a drift found at start did nothing). */
  public readonly summary: Summary | undefined;

  public constructor(message: string, details: { missing: readonly string[]; summary?: Summary }, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TopologyDriftError';
    this.missing = details.missing;
    this.summary = details.summary;
  }
}

/**
 * An event batch was not settled: the invocation fails, and the event source delivers the whole batch
 * again. `summary` is what the invocation did before it gave up.
 */
class EventBatchError extends BoomerangError {
  public constructor(
    message: string,
    public readonly summary: Summary,
    options?: ErrorOptions,
  ) {
    super(message, { ...options, retryable: true });
    this.name = 'EventBatchError';
  }
}

export { EventBatchError, PullAbortedError, TopologyDriftError };
