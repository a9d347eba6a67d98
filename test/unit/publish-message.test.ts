import { describe, expect, it } from 'vitest';
import { messageIdOf, pairs, propertiesOf, type PublishPlan, sharedOptions } from '../../shared/cli/publish-message.js';
import { decodeEvent } from '../../shared/event/decode-event.js';
import { sampleEvent } from '../../shared/event/sample-event.js';
import { UsageError } from '../../shared/errors.js';

const plan = (body: string, properties: PublishPlan['properties'] = {}, headers: PublishPlan['headers'] = {}): PublishPlan => ({
  body: Buffer.from(body),
  headers,
  properties,
  count: 1,
});

describe('boomerang publish: what it sends', () => {
  it.each([
    { flags: ['tenant=acme'], expected: { tenant: 'acme' } },
    { flags: ['q=a=b', 'empty='], expected: { q: 'a=b', empty: '' } },
    { flags: [], expected: {} },
  ])('reads --header $flags', ({ flags, expected }) => {
    expect(pairs('header', flags)).toEqual(expected);
  });

  it.each([
    { flags: ['tenant'], message: '--header takes name=value; got "tenant"' },
    { flags: ['=x'], message: '--header takes name=value; got "=x"' },
  ])('refuses --header $flags', ({ flags, message }) => {
    expect(() => pairs('header', flags)).toThrow(new UsageError(message));
  });

  it.each([
    { flags: ['type=order', 'priority=3', 'timestamp=1700000000'], expected: { type: 'order', priority: 3, timestamp: 1_700_000_000 } },
    { flags: ['messageId=m-1', 'correlationId=c'], expected: { messageId: 'm-1', correlationId: 'c' } },
  ])('reads --property $flags', ({ flags, expected }) => {
    expect(propertiesOf(flags)).toEqual(expected);
  });

  it.each([
    { flags: ['colour=red'], message: /--property colour: no such property; the properties are contentType, /u },
    { flags: ['priority=256'], message: /--property priority must be a whole number from 0 to 255; got "256"/u },
    { flags: ['timestamp=soon'], message: /--property timestamp must be a whole number/u },
  ])('refuses --property $flags', ({ flags, message }) => {
    expect(() => propertiesOf(flags)).toThrow(message);
  });

  it.each([
    { body: '{"a":1}', properties: {}, contentType: 'application/json' },
    { body: 'plain text', properties: {}, contentType: undefined },
    { body: '', properties: {}, contentType: undefined },
    { body: '{"a":1}', properties: { contentType: 'text/x-mine' }, contentType: 'text/x-mine' },
  ])('content type of $body with $properties: $contentType', ({ body, properties, contentType }) => {
    // Act
    const options = sharedOptions(plan(body, properties, { tenant: 'acme' }));
    // Assess
    expect(options.contentType).toBe(contentType);
    expect(options.persistent).toBe(true);
    expect(options.headers).toEqual({ tenant: 'acme' });
  });

  it('gives each message an id of its own, unless one is given', () => {
    expect([0, 1].map((i) => messageIdOf(plan('x'), 'r1', i))).toEqual(['r1-0', 'r1-1']);
    expect([0, 1].map((i) => messageIdOf(plan('x', { messageId: 'fixed' }), 'r1', i))).toEqual(['fixed', 'fixed']);
  });
});

describe('sampleEvent', () => {
  it('makes an event the event function decodes back to the same bodies, ids and headers', () => {
    // Prepare
    const body = Buffer.from([0x00, 0xff, ...Buffer.from('{"n":1}')]);
    const event = sampleEvent('orders', '/', [
      { body, messageId: 's-0', headers: { tenant: 'acme' } },
      { body: Buffer.from('{}'), messageId: 's-1', contentType: 'application/json' },
    ]);
    // Act
    const records = decodeEvent(event, { workQueue: 'orders', parkingQueue: 'orders.parked' });
    // Assess
    expect(records.map((r) => [r.queue, r.vhost, r.problem, r.delivery.properties.messageId])).toEqual([
      ['orders', '/', undefined, 's-0'],
      ['orders', '/', undefined, 's-1'],
    ]);
    expect(records[0]?.delivery.content.equals(body)).toBe(true);
    expect(records[0]?.delivery.properties.headers).toEqual({ tenant: 'acme' });
    expect(records[1]?.delivery.properties.contentType).toBe('application/json');
  });
});
