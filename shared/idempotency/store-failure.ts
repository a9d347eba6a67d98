import { IdempotencyInProgressError, IdempotencyStoreError } from '../errors.js';

/**
 * Powertools errors (by `name`) that mean another run holds the key: already in progress; the record
 * changed between the write and the read three times running; or it vanished in between (the other
 * run failed and deleted it). All of them are settled by coming back later, none by the store's owner.
 */
const HELD_ELSEWHERE = new Set(['IdempotencyAlreadyInProgressError', 'IdempotencyInconsistentStateError', 'IdempotencyItemNotFoundError']);

/**
 * What a failure of the guard itself (never of the work) means for the message: another run holds
 * the key, or the store failed. Classified by `name`, so a second copy of Powertools in a bundle still matches.
 * @example classifyGuardFailure(Object.assign(new Error('busy'), { name: 'IdempotencyAlreadyInProgressError' }), 'm-1', 'redis://cache:6379')
 * // IdempotencyInProgressError
 */
function classifyGuardFailure(error: unknown, key: string, store: string): IdempotencyInProgressError | IdempotencyStoreError {
  const name = error instanceof Error ? error.name : undefined;
  return name !== undefined && HELD_ELSEWHERE.has(name) ? new IdempotencyInProgressError(key, { cause: error }) : new IdempotencyStoreError(store, error);
}

export { classifyGuardFailure };
