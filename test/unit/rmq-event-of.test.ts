import type { MessageProperties } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { decodeEvent } from '../../shared/event/decode-event.js';
import { rmqEventOf } from '../helpers/rmq-event-of.js';

const CONFIG = loadConfig({ WORK_QUEUE: 'orders' });

describe("rmqEventOf (the event source emulator's event)", () => {
  it('builds an event the event function decodes back into the deliveries, counts and redelivered included', () => {
    // Prepare: what amqplib hands a consumer of a quorum queue after returns.
    const headers = {
      'x-delivery-count': 3,
      'x-acquired-count': 7,
      'x-retry-no': '2',
      'x-bytes': Buffer.from([0xff, 0x00]),
      trace: { 'x-death': [{ count: 1, queue: 'orders' }] },
      flag: true,
    };
    const properties = {
      headers,
      messageId: 'm-1',
      contentType: 'application/json',
      deliveryMode: 2,
      priority: 3,
      timestamp: 1_700_000_000,
      type: 'order.created',
    } as unknown as MessageProperties;
    const content = Buffer.from('{"id":1,"text":"é"}');
    // Act
    const event = rmqEventOf('orders', [{ content, fields: { redelivered: true }, properties }]);
    const [record] = decodeEvent(JSON.parse(JSON.stringify(event)) as unknown, CONFIG);
    // Assess
    expect(record?.problem).toBeUndefined();
    expect(record?.notes).toEqual([]);
    expect(record?.delivery.content.equals(content)).toBe(true);
    expect(record?.delivery.fields.redelivered).toBe(true);
    expect(record?.delivery.properties).toMatchObject({
      messageId: 'm-1',
      contentType: 'application/json',
      deliveryMode: 2,
      priority: 3,
      timestamp: 1_700_000_000,
      type: 'order.created',
    });
    expect(record?.delivery.properties.headers).toEqual(headers);
  });

  it("writes strings as Java's signed bytes and unset properties as null, as the mapping does", () => {
    // Act
    const event = rmqEventOf('orders', [
      { content: Buffer.from('x'), fields: { redelivered: false }, properties: { headers: { name: 'é' } } as unknown as MessageProperties },
    ]);
    const [message] = event.rmqMessagesByQueue['orders::/'] ?? [];
    // Assess
    expect(message?.basicProperties?.headers).toEqual({ name: { bytes: [-61, -87] } });
    expect(message?.basicProperties).toMatchObject({ messageId: null, timestamp: null, bodySize: 1 });
    expect(message).toMatchObject({ redelivered: false, data: 'eA==' });
  });
});
