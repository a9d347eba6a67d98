import { describe, expect, it } from 'vitest';
import { BoomerangHeader } from '../../shared/headers.js';
import { toParkedView } from '../../shared/parked/parked-view.js';
import { fakeDelivery } from '../helpers/fakes.js';

describe('toParkedView', () => {
  it('reads what Boomerang wrote on a parked copy', () => {
    // Prepare
    const message = fakeDelivery({
      routingKey: 'orders.parked',
      headers: {
        [BoomerangHeader.parkedAt]: '2026-11-22T09:00:00.000Z',
        [BoomerangHeader.attempts]: 6,
        [BoomerangHeader.errorName]: 'PartnerDown',
        [BoomerangHeader.errorMessage]: 'HTTP 503',
        [BoomerangHeader.parkReason]: 'retries exhausted: 5 of 5 made',
        [BoomerangHeader.sourceQueue]: 'orders',
        [BoomerangHeader.originalRoutingKey]: 'orders.created',
      },
    });
    // Act
    const view = toParkedView(message);
    // Assess
    expect(view).toMatchObject({
      messageId: 'm-1',
      parkedAt: new Date('2026-11-22T09:00:00.000Z'),
      attempts: 6,
      errorName: 'PartnerDown',
      errorMessage: 'HTTP 503',
      parkReason: 'retries exhausted: 5 of 5 made',
      sourceQueue: 'orders',
      routingKey: 'orders.created',
    });
  });

  it('reads a message the broker dead-lettered into the parking lot (the safety net) from x-death', () => {
    // Prepare: as amqplib decodes it, the time is a tagged AMQP timestamp in seconds
    const message = fakeDelivery({
      routingKey: 'orders',
      headers: {
        'x-first-death-queue': 'orders',
        'x-first-death-reason': 'rejected',
        'x-death': [{ queue: 'orders', reason: 'rejected', count: 1, time: { '!': 'timestamp', value: 1_795_334_400 } }],
      },
    });
    // Act
    const view = toParkedView(message);
    // Assess
    expect(view).toMatchObject({ errorName: '(rejected)', sourceQueue: 'orders', routingKey: 'orders', attempts: undefined, errorMessage: undefined });
    expect(view.parkedAt?.getTime()).toBe(1_795_334_400_000);
  });

  it.each([
    ['a byte-array header', { [BoomerangHeader.errorName]: Buffer.from('PartnerDown') }, { errorName: 'PartnerDown' }],
    ['an unparsable time', { [BoomerangHeader.parkedAt]: 'yesterday' }, { parkedAt: undefined }],
    ['attempts that are not a whole number', { [BoomerangHeader.attempts]: 'six' }, { attempts: undefined }],
    ['a bigint attempts count', { [BoomerangHeader.attempts]: 6n }, { attempts: 6 }],
    ['no headers at all', {}, { errorName: undefined, sourceQueue: undefined, routingKey: 'orders.created' }],
  ])('copes with %s', (_what, headers, expected) => {
    expect(toParkedView(fakeDelivery({ headers }))).toMatchObject(expected);
  });
});
