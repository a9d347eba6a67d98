import { BoomerangError } from '../errors.js';
import type { Summary } from '../observability/summary.js';

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

export { EventBatchError };
