import { BoomerangError } from '../errors.js';
import type { Summary } from '../observability/summary.js';

/**
 * The delay path (or parking lot) the current config plans is missing on the broker: the config
 * changed (`MAX_RETRIES`, `BACKOFF_*`, `RETRY_RULES`, `DELAY_MODE`) after `topology apply`, or a queue
 * was deleted. Every copy would come back unroutable, so the invocation takes no message (or stops
 * at the first such copy) and fails until the topology is applied again; nothing waits on a retry.
 * It lives in core, not on the ground floor, because it carries the invocation's summary.
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

export { TopologyDriftError };
