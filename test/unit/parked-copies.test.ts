import { describe, expect, it } from 'vitest';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { replayCopy } from '../../shared/parked/copies.js';
import { fakeDelivery } from '../helpers/fakes.js';
import { nativeParkHeaders, TEAM_HEADERS } from '../helpers/native-park.js';

const TRACE = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=1', tenant: 'acme' };

/** A parked copy as the broker delivers it from a quorum queue. */
function parked() {
  return fakeDelivery({
    properties: {
      messageId: 'order-7',
      correlationId: 'c-7',
      type: 'order.created',
      timestamp: 1_795_334_400,
      priority: 2,
      deliveryMode: 2,
      userId: 'someone-else',
      appId: 'shop',
    },
    headers: {
      ...TRACE,
      'x-retry-no': 5,
      'x-delivery-count': 1,
      'x-death': [{ queue: 'orders' }],
      CC: ['elsewhere'],
      [BoomerangHeader.copyId]: 'copy-1',
      [BoomerangHeader.errorName]: 'PartnerDown',
      [BoomerangHeader.errorMessage]: 'HTTP 503',
      [BoomerangHeader.errorStack]: 'PartnerDown: HTTP 503',
      [BoomerangHeader.attempts]: 6,
      [BoomerangHeader.parkReason]: 'retries exhausted: 5 of 5 made',
      [BoomerangHeader.parkedAt]: '2026-11-22T09:00:00.000Z',
      [BoomerangHeader.sourceQueue]: 'orders',
      [BoomerangHeader.functionName]: 'orders-retry',
      [BoomerangHeader.firstFailureAt]: '2026-11-22T08:00:00.000Z',
      [BoomerangHeader.lastFailureAt]: '2026-11-22T09:00:00.000Z',
      [BoomerangHeader.originalExchange]: 'shop',
      [BoomerangHeader.originalRoutingKey]: 'orders.created',
    },
  });
}

describe('replayCopy', () => {
  it('removes the park headers and the retry count, and keeps trace context, team headers and the original route', () => {
    // Act
    const copy = replayCopy(parked(), { retryHeader: 'x-retry-no', keepCount: false });
    // Assess
    expect(copy.options.headers).toEqual({
      ...TRACE,
      [BoomerangHeader.originalExchange]: 'shop',
      [BoomerangHeader.originalRoutingKey]: 'orders.created',
    });
    expect(copy.options).toMatchObject({ messageId: 'order-7', persistent: true });
  });

  it('keeps the retry count and the failure times with keepCount', () => {
    // Act
    const copy = replayCopy(parked(), { retryHeader: 'x-retry-no', keepCount: true });
    // Assess
    expect(copy.options.headers).toMatchObject({
      'x-retry-no': 5,
      [BoomerangHeader.firstFailureAt]: '2026-11-22T08:00:00.000Z',
      [BoomerangHeader.lastFailureAt]: '2026-11-22T09:00:00.000Z',
    });
    expect(copy.options.headers).not.toHaveProperty(BoomerangHeader.errorName);
    expect(copy.options.headers).not.toHaveProperty('x-death');
  });

  it('honours a custom RETRY_HEADER', () => {
    // Prepare
    const message = fakeDelivery({ headers: { 'retry-count': 3, 'x-retry-no': 'a team header' } });
    // Act
    const copy = replayCopy(message, { retryHeader: 'retry-count', keepCount: false });
    // Assess
    expect(copy.options.headers).toEqual({ 'x-retry-no': 'a team header' });
  });
});

describe('replayCopy of a native park', () => {
  /** A native park with the team's own header types (amqplib decodes them so). */
  const teamTyped = {
    ...TEAM_HEADERS,
    count: 7,
    big: 2n ** 60n,
    when: { '!': 'timestamp', value: 1_795_334_400 },
    raw: Buffer.from([0xff, 0x00]),
    nested: { a: [1, 'two'] },
    'x-team-flag': true,
  };
  const native = () => fakeDelivery({ routingKey: 'orders', headers: { ...nativeParkHeaders(), ...teamTyped } });

  it("starts fresh: every x-opt-boomerang-* annotation, x-opt-delivery-time and the broker headers removed, the team's headers kept as they were", () => {
    // Act
    const copy = replayCopy(native(), { retryHeader: 'x-retry-no', keepCount: false });
    // Assess
    expect(copy.options.headers).toEqual(teamTyped);
    expect(copy.options.headers?.raw).toBe(teamTyped.raw);
    expect(copy.options.headers?.nested).toBe(teamTyped.nested);
  });

  it('keeps the native retry count and failure times with keepCount, never the failed-settlement count nor the delivery time', () => {
    // Act
    const copy = replayCopy(native(), { retryHeader: 'x-retry-no', keepCount: true });
    // Assess: x-delivery-count starts over on the new message, so the old settlement count would no longer add up
    expect(copy.options.headers).toEqual({
      ...teamTyped,
      'x-opt-boomerang-retry-no': 2,
      'x-opt-boomerang-first-failure-at': '2026-11-22T08:00:00.000Z',
      'x-opt-boomerang-last-failure-at': '2026-11-22T08:59:00.000Z',
    });
  });

  it("keeps an x-opt- annotation that is not Boomerang's", () => {
    // Act
    const copy = replayCopy(fakeDelivery({ headers: { ...nativeParkHeaders(), 'x-opt-partner-trace': 'p-1' } }), {
      retryHeader: 'x-retry-no',
      keepCount: false,
    });
    // Assess
    expect(copy.options.headers).toEqual({ ...TEAM_HEADERS, 'x-opt-partner-trace': 'p-1' });
  });
});
