import { RetryableError } from '../../errors.js';

/*
 * The partner's failures, each its own error name, so that the queue's retry rules (functions/partner-sync.ts)
 * can give each its own policy: a rule matches on `errorName`. All are retryable by default; the rules decide.
 */

/** 409: the partner holds a newer version of the record. Sending ours again cannot win. */
class PartnerConflictError extends RetryableError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PartnerConflictError';
  }
}

/** 429: over the partner's rate limit; `retryAfterMs` holds its Retry-After. */
class PartnerRateLimitedError extends RetryableError {
  public constructor(message: string, options?: ErrorOptions & { retryAfterMs?: number }) {
    super(message, options);
    this.name = 'PartnerRateLimitedError';
  }
}

/** 5xx, a network error or a timeout: the partner is down or deploying, usually for minutes. */
class PartnerUnavailableError extends RetryableError {
  public constructor(message: string, options?: ErrorOptions & { retryAfterMs?: number }) {
    super(message, options);
    this.name = 'PartnerUnavailableError';
  }
}

export { PartnerConflictError, PartnerRateLimitedError, PartnerUnavailableError };
