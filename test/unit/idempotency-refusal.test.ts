import { describe, expect, it } from 'vitest';
import { IdempotencyInProgressError, IdempotencyStoreError, RetryableError } from '../../shared/errors.js';
import { guardRefusalOf, refusalFields } from '../../shared/idempotency/refusal.js';

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
