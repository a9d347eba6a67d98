import { describe, expect, it } from 'vitest';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { mayHaveParkNote, toParkedView } from '../../shared/parked/parked-view.js';
import { fakeDelivery } from '../helpers/fakes.js';
import { nativeParkHeaders } from '../helpers/native-park.js';

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
    expect(view).toMatchObject({
      errorName: '(rejected)',
      sourceQueue: 'orders',
      routingKey: 'orders',
      attempts: undefined,
      errorMessage: undefined,
      parkReason: 'dead-lettered by the broker from orders (rejected)',
    });
    expect(view.parkedAt?.getTime()).toBe(1_795_334_400_000);
  });

  const delayDeath = {
    queue: 'orders.delay.1000ms',
    reason: 'expired',
    count: 1,
    exchange: '',
    'routing-keys': ['orders.delay.1000ms'],
    time: { '!': 'timestamp', value: 1_795_334_400 },
  };
  const workDeath = {
    queue: 'orders',
    reason: 'rejected',
    count: 1,
    exchange: '',
    'routing-keys': ['orders'],
    time: { '!': 'timestamp', value: 1_795_334_460 },
  };
  const firstDeathHeaders = { 'x-first-death-queue': 'orders.delay.1000ms', 'x-first-death-reason': 'expired', 'x-first-death-exchange': '' };

  it.each([
    ['3.10: x-death newest first, x-first-death-* naming the delay queue', { ...firstDeathHeaders, 'x-death': [workDeath, delayDeath] }],
    [
      '3.13+/4.x: x-last-death-* too',
      {
        ...firstDeathHeaders,
        'x-last-death-queue': 'orders',
        'x-last-death-reason': 'rejected',
        'x-last-death-exchange': '',
        'x-death': [workDeath, delayDeath],
      },
    ],
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
    const headers = {
      [BoomerangHeader.sourceQueue]: 'orders',
      [BoomerangHeader.errorName]: 'PartnerDown',
      [BoomerangHeader.parkReason]: 'retries exhausted',
      'x-last-death-queue': 'elsewhere',
      'x-last-death-reason': 'expired',
      'x-death': [delayDeath],
    };
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

  describe("a native park (RabbitMQ 4.3: the broker dead-lettered it, Boomerang's fields are x-opt- annotations)", () => {
    it('reads the error, reason, attempts and time from the annotations, and the source queue from x-death', () => {
      // Act
      const view = toParkedView(fakeDelivery({ routingKey: 'orders', headers: nativeParkHeaders() }));
      // Assess: not '(rejected)' nor the death in words, though x-death says rejected
      expect(view).toMatchObject({
        errorName: 'PartnerDown',
        errorMessage: 'HTTP 503 for order 42',
        parkReason: 'retries exhausted: 2 of 2 made',
        attempts: 3,
        parkedAt: new Date('2026-11-22T09:00:00.000Z'),
        sourceQueue: 'orders',
        routingKey: 'orders',
      });
    });

    it("gives the routing key the message was published with, from x-death, not the parking lot's own", () => {
      // Prepare: published to orders.created; the broker dead-lettered it with the lot's key
      const headers = {
        ...nativeParkHeaders(),
        'x-death': [{ queue: 'orders', reason: 'rejected', count: 1, exchange: '', 'routing-keys': ['orders.created'] }],
      };
      // Act
      const view = toParkedView(fakeDelivery({ routingKey: 'orders.parked', headers }));
      // Assess
      expect(view.routingKey).toBe('orders.created');
    });

    const { 'x-last-death-queue': _q, 'x-last-death-reason': _r, 'x-last-death-exchange': _x, ...withoutLastDeath } = nativeParkHeaders();
    it.each([
      ['x-death and x-last-death-*', nativeParkHeaders(), 'orders'],
      ['x-death alone (3.10-style, as a walk on 3.10 republishes it)', withoutLastDeath, 'orders'],
      ['a Boomerang source-queue header too (it wins)', { ...nativeParkHeaders(), [BoomerangHeader.sourceQueue]: 'orders.v2' }, 'orders.v2'],
    ])('takes the source queue from %s', (_what, headers, sourceQueue) => {
      expect(toParkedView(fakeDelivery({ headers })).sourceQueue).toBe(sourceQueue);
    });

    it.each([
      ['errorName', { [BoomerangHeader.errorName]: 'Timeout' }, 'Timeout'],
      ['errorMessage', { [BoomerangHeader.errorMessage]: 'took 3000ms' }, 'took 3000ms'],
      ['parkReason', { [BoomerangHeader.parkReason]: 'unrecoverable' }, 'unrecoverable'],
      ['attempts', { [BoomerangHeader.attempts]: 9 }, 9],
    ] as const)('prefers a boomerang- header over its annotation (%s)', (field, header, expected) => {
      expect(toParkedView(fakeDelivery({ headers: { ...nativeParkHeaders(), ...header } }))[field]).toBe(expected);
    });

    it.each([
      ['a bigint attempts count (int64 on the wire)', { 'x-opt-boomerang-attempts': 3n }, { attempts: 3 }],
      ['a byte-array error name', { 'x-opt-boomerang-error-name': Buffer.from('PartnerDown') }, { errorName: 'PartnerDown' }],
      [
        'no park annotations (a reject from elsewhere): the death in words',
        { 'x-opt-boomerang-error-name': undefined, 'x-opt-boomerang-park-reason': undefined },
        { errorName: '(rejected)', parkReason: 'dead-lettered by the broker from orders (rejected)' },
      ],
    ])('copes with %s', (_what, headers, expected) => {
      expect(toParkedView(fakeDelivery({ headers: { ...nativeParkHeaders(), ...headers } }))).toMatchObject(expected);
    });
  });
});

describe('a message the broker parked, with its park note', () => {
  const rejected = { 'x-death': [{ queue: 'orders', reason: 'rejected', count: 1 }], tenant: 'acme' };
  const note = fakeDelivery({
    body: '',
    headers: {
      [BoomerangHeader.errorName]: 'PartnerDown',
      [BoomerangHeader.errorMessage]: 'HTTP 413',
      [BoomerangHeader.parkReason]: 'too large to copy: …',
      [BoomerangHeader.attempts]: 1,
      [BoomerangHeader.sourceQueue]: 'orders',
      [BoomerangHeader.parkedAt]: '2026-11-30T04:00:00.000Z',
    },
  });

  it.each<[string, Record<string, unknown>, boolean]>([
    ['rejected into the lot, with nothing of Boomerang', rejected, true],
    ['expired into the lot', { 'x-death': [{ queue: 'orders.delay.1000ms', reason: 'expired', count: 1 }] }, false],
    ['a parked copy', { ...rejected, [BoomerangHeader.errorName]: 'Error' }, false],
    ['a native park', { ...rejected, 'x-opt-boomerang-error-name': 'Error' }, false],
    ['no dead-lettering at all', {}, false],
  ])('is looked up only when it may have a note: %s', (_what, headers, expected) => {
    expect(mayHaveParkNote(fakeDelivery({ headers }))).toBe(expected);
  });

  it("reads its failure from the note, and the rest (headers, body, the broker's record) from the message", () => {
    // Act
    const view = toParkedView(fakeDelivery({ body: 'big', headers: rejected }), note);
    // Assess
    expect(view).toMatchObject({
      errorName: 'PartnerDown',
      errorMessage: 'HTTP 413',
      parkReason: 'too large to copy: …',
      attempts: 1,
      sourceQueue: 'orders',
      brokerSourceQueue: 'orders',
      parkedAt: new Date('2026-11-30T04:00:00.000Z'),
      headers: rejected,
    });
    expect(view.body.toString()).toBe('big');
    expect(view.parkNote).toBe(note.properties.headers);
  });

  it('reads as the broker parked it without a note', () => {
    expect(toParkedView(fakeDelivery({ headers: rejected }))).toMatchObject({ errorName: '(rejected)', parkNote: undefined });
  });
});
