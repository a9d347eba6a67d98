import { describe, expect, it } from 'vitest';
import { IdempotencyInProgressError, IdempotencyStoreError } from '../../shared/errors.js';
import { classifyGuardFailure } from '../../shared/idempotency/store-failure.js';

describe('classifyGuardFailure', () => {
  const named = (name: string): Error => Object.assign(new Error('from Powertools'), { name });

  it.each([
    ['IdempotencyAlreadyInProgressError', IdempotencyInProgressError],
    ['IdempotencyInconsistentStateError', IdempotencyInProgressError],
    ['IdempotencyItemNotFoundError', IdempotencyInProgressError],
    ['IdempotencyPersistenceLayerError', IdempotencyStoreError],
    ['IdempotencyPersistenceConsistencyError', IdempotencyStoreError],
    ['ResourceNotFoundException', IdempotencyStoreError],
    ['TimeoutError', IdempotencyStoreError],
  ])('turns %s into %o', (name, expected) => {
    // Act
    const error = classifyGuardFailure(named(name), 'order-1', 'dynamodb:orders-idempotency');
    // Assess
    expect(error).toBeInstanceOf(expected);
    expect(error.retryable).toBe(true);
    expect(error.cause).toMatchObject({ name });
  });

  it('names the store and the innermost cause in a store error', () => {
    // Prepare
    const cause = new Error('Failed to save in progress record to idempotency store', {
      cause: Object.assign(new Error('Requested resource not found'), { name: 'ResourceNotFoundException' }),
    });
    // Act
    const error = classifyGuardFailure(cause, 'order-1', 'dynamodb:orders-idempotency');
    // Assess
    expect(error).toMatchObject({ name: 'IdempotencyStoreError', store: 'dynamodb:orders-idempotency' });
    expect(error.message).toContain('The idempotency store dynamodb:orders-idempotency failed (ResourceNotFoundException: Requested resource not found)');
  });

  it('treats a thrown non-Error as a store failure', () => {
    // Act
    const error = classifyGuardFailure('socket hang up', 'order-1', 'redis://cache:6379');
    // Assess
    expect(error).toBeInstanceOf(IdempotencyStoreError);
    expect(error.message).toContain('(socket hang up)');
  });
});
