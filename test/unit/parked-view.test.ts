import { describe, expect, it } from 'vitest';
import { BoomerangHeader } from '../../shared/message/headers.js';
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
    expect(view).toMatchObject({ errorName: '(rejected)', sourceQueue: 'orders', routingKey: 'orders', attempts: undefined, errorMessage: undefined, parkReason: 'dead-lettered by the broker from orders (rejected)' });
    expect(view.parkedAt?.getTime()).toBe(1_795_334_400_000);
  });

  const delayDeath = { queue: 'orders.delay.1000ms', reason: 'expired', count: 1, exchange: '', 'routing-keys': ['orders.delay.1000ms'], time: { '!': 'timestamp', value: 1_795_334_400 } };
  const workDeath = { queue: 'orders', reason: 'rejected', count: 1, exchange: '', 'routing-keys': ['orders'], time: { '!': 'timestamp', value: 1_795_334_460 } };
  const firstDeathHeaders = { 'x-first-death-queue': 'orders.delay.1000ms', 'x-first-death-reason': 'expired', 'x-first-death-exchange': '' };

  it.each([
    ['3.10: x-death newest first, x-first-death-* naming the delay queue', { ...firstDeathHeaders, 'x-death': [workDeath, delayDeath] }],
    ['3.13+/4.x: x-last-death-* too', { ...firstDeathHeaders, 'x-last-death-queue': 'orders', 'x-last-death-reason': 'rejected', 'x-last-death-exchange': '', 'x-death': [workDeath, delayDeath] }],
    ['x-last-death-* alone (x-death dropped by someone)', { ...firstDeathHeaders, 'x-last-death-queue': 'orders', 'x-last-death-reason': 'rejected' }],
  ])('names the last death of a message that came back from a delay queue and was then rejected (%s)', (_what, headers) => {
    // Act
    const view = toParkedView(fakeDelivery({ routingKey: 'orders', headers }));
    // Assess
    expect(view).toMatchObject({ sourceQueue: 'orders', errorName: '(rejected)', parkReason: 'dead-lettered by the broker from orders (rejected)' });
  });

  it('dates a broker-dead-lettered message by its last death', () => {
    expect(toParkedView(fakeDelivery({ headers: { 'x-death': [workDeath, delayDeath] } })).parkedAt?.getTime()).toBe(1_795_334_460_000);
  });

  it('falls back on x-first-death-* when nothing newer is there', () => {
    expect(toParkedView(fakeDelivery({ headers: firstDeathHeaders }))).toMatchObject({ sourceQueue: 'orders.delay.1000ms', errorName: '(expired)' });
  });

  it('prefers what Boomerang wrote when it parked the message itself', () => {
    // Prepare
    const headers = { [BoomerangHeader.sourceQueue]: 'orders', [BoomerangHeader.errorName]: 'PartnerDown', [BoomerangHeader.parkReason]: 'retries exhausted', 'x-last-death-queue': 'elsewhere', 'x-last-death-reason': 'expired', 'x-death': [delayDeath] };
    // Act
    const view = toParkedView(fakeDelivery({ headers }));
    // Assess
    expect(view).toMatchObject({ sourceQueue: 'orders', errorName: 'PartnerDown', parkReason: 'retries exhausted' });
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
