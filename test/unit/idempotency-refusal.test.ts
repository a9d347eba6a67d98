import { describe, expect, it } from 'vitest';
import { IdempotencyInProgressError, IdempotencyStoreError, RetryableError } from '../../shared/errors.js';
import { classifyGuardFailure, guardRefusalOf, refusalFields } from '../../shared/idempotency/refusal.js';

describe('Function: guardRefusalOf', () => {
  it.each([
    { thrown: new IdempotencyInProgressError('order-1'), expected: 'in-progress' },
    { thrown: new IdempotencyStoreError('redis://cache:6379', new Error('ECONNREFUSED')), expected: 'store-down' },
    // A second copy of the classes (another bundle) is matched by name.
    { thrown: Object.assign(new Error('busy'), { name: 'IdempotencyInProgressError' }), expected: 'in-progress' },
    { thrown: new RetryableError('partner down'), expected: undefined },
    { thrown: 'a string', expected: undefined },
    { thrown: null, expected: undefined },
  ])('$thrown is $expected', ({ thrown, expected }) => {
    expect(guardRefusalOf(thrown)).toBe(expected);
  });
});

describe('Function: refusalFields', () => {
  it('names the key held, or the store (password redacted by the error) and why it failed', () => {
    // Act
    const held = refusalFields(new IdempotencyInProgressError('order-1'));
    const down = refusalFields(new IdempotencyStoreError('redis://u:***@cache:6379', new Error('ECONNREFUSED')));
    // Assess
    expect(held).toMatchObject({ key: 'order-1' });
    expect(held).not.toHaveProperty('store');
    expect(down).toMatchObject({ store: 'redis://u:***@cache:6379' });
    expect(String(down.reason)).toContain('Error: ECONNREFUSED');
  });
});

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
