import type { MessageProperties } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { buildParkedCopy, buildRetryCopy, cutUtf8, type Delivery } from '../../shared/message/copy-message.js';
import { BoomerangHeader } from '../../shared/message/headers.js';

const NOW = new Date('2026-11-22T10:00:00.000Z');

function delivery(properties: Partial<MessageProperties>, fields = { exchange: 'shop', routingKey: 'orders.created' }): Delivery {
  return { content: Buffer.from('{"a":1}'), fields, properties: { headers: {}, ...properties } as MessageProperties };
}

describe('buildRetryCopy', () => {
  it('keeps the properties and user headers, and sets the count', () => {
    // Prepare
    const original = delivery({
      messageId: 'm',
      correlationId: 'c',
      contentType: 'application/json',
      type: 't',
      appId: 'app',
      timestamp: 5,
      priority: 2,
      replyTo: 'r',
      headers: { tenant: 'acme', traceparent: 'tp' },
    });
    // Act
    const copy = buildRetryCopy(original, { retryHeader: 'x-retry-no', retryNo: 1, now: NOW });
    // Assess
    expect(copy.content).toBe(original.content);
    expect(copy.options).toMatchObject({
      messageId: 'm',
      correlationId: 'c',
      contentType: 'application/json',
      type: 't',
      appId: 'app',
      timestamp: 5,
      priority: 2,
      replyTo: 'r',
      persistent: true,
    });
    expect(copy.options.headers).toMatchObject({ tenant: 'acme', traceparent: 'tp', 'x-retry-no': 1 });
  });

  it.each(['x-death', 'x-first-death-queue', 'x-last-death-reason', 'x-delivery-count', 'CC', 'BCC', BoomerangHeader.copyId])('drops the %s header', (name) => {
    const copy = buildRetryCopy(delivery({ headers: { [name]: 'x', keep: 1 } }), { retryHeader: 'x-retry-no', retryNo: 1, now: NOW });
    expect(copy.options.headers).not.toHaveProperty(name);
    expect(copy.options.headers).toHaveProperty('keep', 1);
  });

  it('drops expiration and userId', () => {
    const copy = buildRetryCopy(delivery({ expiration: '1000', userId: 'someone' }), { retryHeader: 'x-retry-no', retryNo: 1, now: NOW });
    expect(copy.options).not.toHaveProperty('expiration');
    expect(copy.options).not.toHaveProperty('userId');
  });

  it('records the original exchange and routing key once, and keeps the first failure time', () => {
    // Prepare: a message that has been retried already arrives via the delay path
    const retried = delivery(
      {
        headers: {
          [BoomerangHeader.originalExchange]: 'shop',
          [BoomerangHeader.originalRoutingKey]: 'orders.created',
          [BoomerangHeader.firstFailureAt]: '2026-11-22T09:00:00.000Z',
        },
      },
      { exchange: '', routingKey: 'work' },
    );
    // Act
    const copy = buildRetryCopy(retried, { retryHeader: 'x-retry-no', retryNo: 2, now: NOW });
    // Assess
    expect(copy.options.headers).toMatchObject({
      [BoomerangHeader.originalExchange]: 'shop',
      [BoomerangHeader.originalRoutingKey]: 'orders.created',
      [BoomerangHeader.firstFailureAt]: '2026-11-22T09:00:00.000Z',
      [BoomerangHeader.lastFailureAt]: NOW.toISOString(),
    });
  });
});

describe('buildParkedCopy', () => {
  const park = {
    retryHeader: 'x-retry-no',
    retryNo: 3,
    now: NOW,
    reason: 'retries exhausted',
    errorName: 'E',
    errorMessage: 'é'.repeat(2000),
    errorStack: 's',
    sourceQueue: 'work',
    functionName: 'fn',
  };

  it('adds why and where it failed, with the message cut to 1 KiB', () => {
    const headers = buildParkedCopy(delivery({ headers: { tenant: 'acme' } }), park).options.headers ?? {};
    expect(headers).toMatchObject({
      tenant: 'acme',
      [BoomerangHeader.attempts]: 4,
      [BoomerangHeader.errorName]: 'E',
      [BoomerangHeader.parkReason]: 'retries exhausted',
      [BoomerangHeader.sourceQueue]: 'work',
      [BoomerangHeader.functionName]: 'fn',
      [BoomerangHeader.parkedAt]: NOW.toISOString(),
    });
    expect(Buffer.byteLength(String(headers[BoomerangHeader.errorMessage]))).toBeLessThanOrEqual(1024);
  });

  it('can drop the user headers and keep its own', () => {
    const headers = buildParkedCopy(delivery({ headers: { big: 'x'.repeat(10) } }), { ...park, withoutUserHeaders: true }).options.headers ?? {};
    expect(headers).not.toHaveProperty('big');
    expect(headers).toHaveProperty(BoomerangHeader.errorName, 'E');
  });
});

describe('cutUtf8', () => {
  it.each([
    ['short', 10, 'short'],
    // The marker takes 8 bytes of the budget.
    ['abcdefghijklmnop', 10, 'ab…[cut]'],
    ['ééééééé', 13, 'éé…[cut]'], // 5 bytes left: two 2-byte characters, never half of one
  ])('cuts %j to %i bytes', (text, max, expected) => {
    expect(cutUtf8(text, max)).toBe(expected);
    expect(Buffer.byteLength(cutUtf8(text, max))).toBeLessThanOrEqual(max);
  });
});
