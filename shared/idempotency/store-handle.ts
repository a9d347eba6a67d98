import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';

/** A Powertools persistence layer and the client under it, created once per guard (per container). */
type StoreHandle = {
  readonly persistence: BasePersistenceLayer;
  /** Closes the client; calls after it fail with the store's own error. */
  close(): Promise<void>;
};

/**
 * How long opening a connection to the store may take. A message waits on it, and an unreachable
 * store must turn into a retry well inside the invocation's time, not hang until Lambda kills it.
 */
const STORE_CONNECT_TIMEOUT_MS = 2_000;

/** How long one read or write may take once connected (a store that accepts but never answers). */
const STORE_REQUEST_TIMEOUT_MS = 2_000;

export { STORE_CONNECT_TIMEOUT_MS, STORE_REQUEST_TIMEOUT_MS };
export type { StoreHandle };
