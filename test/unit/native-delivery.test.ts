import { describe, expect, it } from 'vitest';
import type { Message } from 'rhea';
import { fromAmqp10 } from '../../shared/native/native-delivery.js';

/** A message as rhea 3.0.5 decoded one that a 0-9-1 client published to RabbitMQ 4.3.6 (measured). */
const FROM_091: Message = {
  durable: true,
  priority: 3,
  ttl: 600000,
  first_acquirer: false,
  delivery_count: 1,
  message_annotations: {
    'x-opt-boomerang-retry-no': 1,
    'x-delivery-count': 1,
    'x-acquired-count': 1,
    'x-routing-key': 'orders',
    'x-exchange': 'shop',
    'x-basic-type': 'order',
    'x-custom': 'xc',
  },
  message_id: 'm1',
  correlation_id: 'c1',
  content_type: 'application/json',
  content_encoding: 'gzip',
  reply_to: '/queues/answers%2Fhere',
  user_id: Buffer.from('guest'),
  creation_time: new Date(1700000001000),
  group_id: 'app',
  application_properties: { s: 'text', i32: 7, i64: 9007199254740994, d: 2.25, ts: new Date(1700000000000), bytes: Buffer.from([0xff, 0x00]), nul: null },
  body: { typecode: 0x75, content: Buffer.from('hello') },
} as unknown as Message;

describe('fromAmqp10', () => {
  it('reads a 0-9-1 message back as a 0-9-1 consumer sees it: body, fields, properties and headers', () => {
    // Act
    const { delivery, problem } = fromAmqp10(FROM_091);
    // Assess
    expect(problem).toBeUndefined();
    expect(delivery.content.toString()).toBe('hello');
    expect(delivery.fields).toEqual({ exchange: 'shop', routingKey: 'orders' });
    expect(delivery.properties).toEqual({
      contentType: 'application/json',
      contentEncoding: 'gzip',
      deliveryMode: 2,
      priority: 3,
      correlationId: 'c1',
      replyTo: 'answers/here',
      expiration: '600000',
      messageId: 'm1',
      timestamp: 1700000001,
      type: 'order',
      userId: 'guest',
      appId: 'app',
      clusterId: undefined,
      headers: {
        s: 'text',
        i32: 7,
        i64: 9007199254740994,
        d: 2.25,
        ts: { '!': 'timestamp', value: 1700000000 },
        bytes: Buffer.from([0xff, 0x00]),
        nul: null,
        'x-opt-boomerang-retry-no': 1,
        'x-delivery-count': 1,
        'x-acquired-count': 1,
        'x-custom': 'xc',
      },
    });
  });

  it.each<[string, unknown, string]>([
    ['several data sections, joined', { typecode: 0x75, multiple: true, content: [Buffer.from('ab'), Buffer.from('c')] }, 'abc'],
    ['an AMQP value that is text', 'plain text', 'plain text'],
    ['an AMQP value that is binary', Buffer.from('bin'), 'bin'],
    ['no body', undefined, ''],
  ])('reads %s as bytes', (_what, body, expected) => {
    // Act
    const { delivery, problem } = fromAmqp10({ body } as unknown as Message);
    // Assess
    expect(problem).toBeUndefined();
    expect(delivery.content.toString()).toBe(expected);
  });

  it.each<[string, unknown, string]>([
    ['an AMQP value that is a map', { a: 1 }, 'an AMQP 1.0 value (object)'],
    ['an AMQP sequence', { typecode: 0x76, content: [1, 2] }, 'an AMQP 1.0 section 0x76'],
    ['an AMQP value that is a number', 42, 'an AMQP 1.0 value (number)'],
  ])('names %s as a problem (the message is parked with it), never throws', (_what, body, expected) => {
    // Act
    const { problem } = fromAmqp10({ body } as unknown as Message);
    // Assess
    expect(problem).toContain(expected);
  });

  it('gives a message with no annotations and no properties empty fields and headers', () => {
    // Act
    const { delivery } = fromAmqp10({ body: { typecode: 0x75, content: Buffer.from('x') } } as unknown as Message);
    // Assess
    expect(delivery.fields).toEqual({ exchange: '', routingKey: '' });
    expect(delivery.properties.headers).toEqual({});
    expect(delivery.properties.messageId).toBeUndefined();
  });
});
