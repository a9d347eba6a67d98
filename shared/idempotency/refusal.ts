/**
 * The guard's own refusals, both ways: how the guard turns a failure of its store into one
 * (`classifyGuardFailure`), and how the engine tells one from a handler's failure (`guardRefusalOf`):
 * neither runs the handler, so neither is an attempt, nor a reason to open the circuit breaker or to park.
 */
import { IdempotencyInProgressError, IdempotencyStoreError } from '../errors.js';

/** `in-progress`: another run holds the key; `store-down`: the store failed (the guard cannot tell a duplicate). */
type GuardRefusal = 'in-progress' | 'store-down';

/**
 * Store failures in a row after which an invocation stops taking messages (pull) or stops asking the
 * store (event: the rest of the batch is deferred untried): a store that is down for one message is
 * down for the next, and each message would only wait for the store's timeout to be deferred anyway.
 */
const STORE_FAILURES_TO_STOP = 3;

/**
 * The refusal `thrown` is, by `name` (a bundle may hold a second copy of the error classes), or undefined
 * for any other error, which is the handler's own.
 * @example guardRefusalOf(new IdempotencyStoreError('redis://cache:6379', cause)) // 'store-down'
 */
function guardRefusalOf(thrown: unknown): GuardRefusal | undefined {
  const name = (thrown as { name?: unknown } | null | undefined)?.name;
  if (name === 'IdempotencyInProgressError') return 'in-progress';
  if (name === 'IdempotencyStoreError') return 'store-down';
  return undefined;
}

/** What a deferred message's warning carries: the key held, or the store (its password redacted) and why it failed. */
function refusalFields(thrown: unknown): Record<string, unknown> {
  const { key, store, message } = thrown as { key?: string; store?: string; message?: string };
  return { ...(key === undefined ? {} : { key }), ...(store === undefined ? {} : { store }), reason: message };
}

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

export { classifyGuardFailure, guardRefusalOf, refusalFields, STORE_FAILURES_TO_STOP };
export type { GuardRefusal };
