/**
 * The errors the idempotency guard raises. They live here until the engine wiring moves them into
 * shared/errors.ts; both are retryable: the engine sends the message back to the delay path.
 */
import { RetryFunctionError } from '../errors.js';

/**
 * Another run holds the message's key (it is handling the same message right now, or it crashed less
 * than its remaining time ago). Running now could repeat the effect, so the message must come back
 * later: the engine neither counts an attempt nor parks it.
 */
class IdempotencyInProgressError extends RetryFunctionError {
  /** The message's idempotency key (the messageId unless a key function was given). */
  public readonly key: string;

  public constructor(key: string, options?: ErrorOptions) {
    super(`Another run is handling the message with idempotency key ${JSON.stringify(key)}; it comes back later and runs if that run fails or never finishes.`, { ...options, retryable: true });
    this.name = 'IdempotencyInProgressError';
    this.key = key;
  }
}

/**
 * The idempotency store could not be reached or refused a read or write, so the guard cannot tell a
 * duplicate from a first run; the handler was not called, and the message must be retried later.
 */
class IdempotencyStoreError extends RetryFunctionError {
  /** The store, with any password redacted (`redis://cache:6379`, `dynamodb:boomerang-idempotency`). */
  public readonly store: string;

  public constructor(store: string, cause: unknown) {
    super(`The idempotency store ${store} failed (${describeCause(cause)}); the handler was not called and the message is retried later. Check that the store is reachable from the function and that its table or server exists.`, { cause, retryable: true });
    this.name = 'IdempotencyStoreError';
    this.store = store;
  }
}

/** Powertools wraps the store's own error: show the innermost message, which names the real problem. */
function describeCause(cause: unknown): string {
  let inner = cause;
  while (inner instanceof Error && inner.cause !== undefined) inner = inner.cause;
  if (inner instanceof Error) return `${inner.name}: ${inner.message}`;
  return String(inner);
}

export { IdempotencyInProgressError, IdempotencyStoreError };
