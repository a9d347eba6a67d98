import { IdempotencyAlreadyInProgressError, IdempotencyInconsistentStateError, IdempotencyRecordStatus } from '@aws-lambda-powertools/idempotency';
import type { IdempotencyItemAlreadyExistsError } from '@aws-lambda-powertools/idempotency';
import type { BasePersistenceLayer, IdempotencyRecord } from '@aws-lambda-powertools/idempotency/persistence';

/** `claimed`: this run holds the key now (in progress); `completed`: an earlier run completed it. */
type Claim = 'claimed' | 'completed';

/**
 * How many more times a record that expired between the write and the read is tried, as Powertools'
 * IdempotencyHandler does (its MAX_RETRIES, not exported).
 */
const INCONSISTENT_RETRIES = 2;

/**
 * Writes the key's in-progress record, or says why not, the way Powertools' IdempotencyHandler does
 * before a run: an existing record that completed answers `completed`; one in progress throws
 * `IdempotencyAlreadyInProgressError`; one that expired in between is tried again, up to twice,
 * then throws `IdempotencyInconsistentStateError`. A store failure throws the store's own error.
 * Driving the persistence layer directly (rather than `makeIdempotent` per message) passes each
 * run's time left as an argument instead of through a config shared by the runs in flight.
 * @param deadline epoch ms after which the in-progress record no longer holds the key (a crashed run's key frees itself).
 * @example await claimKey(persistence, 'order-1', Date.now() + 30_000) // 'claimed'
 */
async function claimKey(persistence: BasePersistenceLayer, key: string, deadline: number): Promise<Claim> {
  for (let retry = 0; ; retry++) {
    let existing: IdempotencyRecord;
    try {
      // At least 1 ms: Powertools treats 0 as "unknown" and writes no in-progress expiry at all.
      await persistence.saveInProgress(key, Math.max(1, deadline - Date.now()));
      return 'claimed';
    } catch (error) {
      // By `name`, as classifyGuardFailure: a second copy of Powertools in a bundle still matches.
      if (!(error instanceof Error) || error.name !== 'IdempotencyItemAlreadyExistsError') throw error;
      const found = (error as IdempotencyItemAlreadyExistsError).existingRecord;
      // The DynamoDB layer may not return the record it collided with: then it is read.
      existing = found === undefined ? await persistence.getRecord(key) : persistence.processExistingRecord(found, key);
    }
    const status = existing.getStatus();
    if (status === IdempotencyRecordStatus.COMPLETED) return 'completed';
    if (status === IdempotencyRecordStatus.INPROGRESS)
      throw new IdempotencyAlreadyInProgressError(`There is already an execution in progress with idempotency key: ${existing.idempotencyKey}`, existing);
    if (retry >= INCONSISTENT_RETRIES) throw new IdempotencyInconsistentStateError('Item has expired during processing and may not longer be valid.');
  }
}

export { claimKey };
