import { describe, expect, it } from 'vitest';
import type { Verdict } from '../../shared/core/verdict.js';
import type { Delivery } from '../../shared/message/copy-message.js';
import { NativeAnnotation, amqp10Outcome } from '../../shared/native/native-annotations.js';

const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);
const AT = new Date(NOW).toISOString();
const CONTEXT = { now: NOW, functionName: 'boomerang-orders-pull' };
const ERROR = { name: 'PartnerDown', message: 'HTTP 503', retryable: true, retryAfterMs: undefined };

function delivery(headers: Record<string, unknown> = {}): Delivery {
  return { content: Buffer.from('{}'), fields: { exchange: '', routingKey: 'orders' }, properties: { headers } as Delivery['properties'] };
}

describe('amqp10Outcome', () => {
  it.each<[string, Verdict, Record<string, unknown>, unknown]>([
    ['a success is accepted', { kind: 'ack', unkeyed: false }, {}, { kind: 'accepted' }],
    ['a duplicate is accepted', { kind: 'duplicate' }, {}, { kind: 'accepted' }],
    ['a give-back is released', { kind: 'give-back', why: 'out-of-time' }, {}, { kind: 'released' }],
    [
      'a first retry is modified, failed, with its delivery time, count, error and failure history',
      { kind: 'retry', retryNo: 0, nextRetryNo: 1, delayMs: 3000, error: ERROR },
      {},
      {
        kind: 'modified',
        deliveryFailed: true,
        undeliverableHere: false,
        annotations: {
          [NativeAnnotation.deliveryTime]: NOW + 3000,
          [NativeAnnotation.retryNo]: 1,
          [NativeAnnotation.failedSettlements]: 1,
          [NativeAnnotation.errorName]: 'PartnerDown',
          [NativeAnnotation.errorMessage]: 'HTTP 503',
          [NativeAnnotation.firstFailureAt]: AT,
          [NativeAnnotation.lastFailureAt]: AT,
          [NativeAnnotation.failureHistory]: `${AT} PartnerDown: HTTP 503`,
        },
      },
    ],
    [
      'a later retry counts on and keeps the first failure time',
      { kind: 'retry', retryNo: 2, nextRetryNo: 3, delayMs: 250, error: ERROR },
      { [NativeAnnotation.retryNo]: 2, [NativeAnnotation.failedSettlements]: 4, [NativeAnnotation.firstFailureAt]: '2026-11-25T11:00:00.000Z' },
      {
        kind: 'modified',
        deliveryFailed: true,
        undeliverableHere: false,
        annotations: expect.objectContaining({
          [NativeAnnotation.deliveryTime]: NOW + 250,
          [NativeAnnotation.retryNo]: 3,
          [NativeAnnotation.failedSettlements]: 5,
          [NativeAnnotation.firstFailureAt]: '2026-11-25T11:00:00.000Z',
          [NativeAnnotation.lastFailureAt]: AT,
        }),
      },
    ],
    [
      'a deferral is delayed without counting as failed, its annotations untouched',
      { kind: 'defer', retryNo: 2, delayMs: 1000, why: ERROR },
      { [NativeAnnotation.retryNo]: 2, [NativeAnnotation.failedSettlements]: 4 },
      { kind: 'modified', deliveryFailed: false, undeliverableHere: false, annotations: { [NativeAnnotation.deliveryTime]: NOW + 1000 } },
    ],
    [
      'a park is dead-lettered with its error, reason, attempts, failure times (the park is the last failure), time and function',
      { kind: 'park', retryNo: 5, reason: 'retries exhausted (5)', error: ERROR, stack: 'PartnerDown: HTTP 503\n    at handler', copyable: true },
      {
        [NativeAnnotation.retryNo]: 5,
        [NativeAnnotation.firstFailureAt]: '2026-01-01T00:00:00.000Z',
        [NativeAnnotation.lastFailureAt]: '2026-01-01T00:05:00.000Z',
        [NativeAnnotation.failureHistory]: '2026-01-01T00:05:00.000Z PartnerDown: HTTP 502',
      },
      {
        kind: 'modified',
        deliveryFailed: true,
        undeliverableHere: true,
        annotations: {
          [NativeAnnotation.firstFailureAt]: '2026-01-01T00:00:00.000Z',
          [NativeAnnotation.lastFailureAt]: AT,
          [NativeAnnotation.failureHistory]: `2026-01-01T00:05:00.000Z PartnerDown: HTTP 502\n${AT} PartnerDown: HTTP 503`,
          [NativeAnnotation.errorName]: 'PartnerDown',
          [NativeAnnotation.errorMessage]: 'HTTP 503',
          [NativeAnnotation.errorStack]: 'PartnerDown: HTTP 503\n    at handler',
          [NativeAnnotation.parkReason]: 'retries exhausted (5)',
          [NativeAnnotation.attempts]: 6,
          [NativeAnnotation.parkedAt]: AT,
          [NativeAnnotation.functionName]: 'boomerang-orders-pull',
        },
      },
    ],
  ])('%s', (_what, verdict, headers, expected) => {
    // Act
    const outcome = amqp10Outcome(verdict, delivery(headers), CONTEXT);
    // Assess
    expect(outcome).toEqual(expected);
  });

  it('writes only x-opt- annotations, the only ones the broker keeps on the message', () => {
    // Act
    const names = Object.values(NativeAnnotation);
    // Assess
    expect(names.every((name) => name.startsWith('x-opt-'))).toBe(true);
  });

  it('cuts a long error message and stack, never splitting a character', () => {
    // Prepare
    const long = 'ä'.repeat(5000);
    const verdict: Verdict = { kind: 'park', retryNo: 0, reason: 'unrecoverable', error: { ...ERROR, message: long }, stack: long, copyable: true };
    // Act
    const outcome = amqp10Outcome(verdict, delivery(), CONTEXT);
    // Assess
    const annotations = (outcome as { annotations: Record<string, string> }).annotations;
    expect(Buffer.byteLength(annotations[NativeAnnotation.errorMessage]!)).toBeLessThanOrEqual(1024);
    expect(Buffer.byteLength(annotations[NativeAnnotation.errorStack]!)).toBeLessThanOrEqual(4096);
    expect(annotations[NativeAnnotation.errorStack]).toMatch(/ä…\[cut\]$/);
  });
});
