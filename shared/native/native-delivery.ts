/**
 * An AMQP 1.0 message as the rest of Boomerang sees a delivery: the body, and the properties and
 * headers an AMQP 0-9-1 consumer of the same message would see, so that a handler, the retry rules and
 * the crash-loop guard read a native message as they read any other. Pure: no I/O.
 *
 * RabbitMQ 4.3 gives an AMQP 1.0 consumer a message published over 0-9-1 like this (measured on 4.3.6),
 * and it is read back the same way:
 *
 * | 0-9-1                     | AMQP 1.0 (as rhea decodes it)                      | back to                 |
 * |---------------------------|----------------------------------------------------|-------------------------|
 * | body                      | one `data` section                                 | `content`               |
 * | headers named `x-…`       | message annotations                                | headers                 |
 * | other headers             | application properties (tables and arrays are not delivered) | headers       |
 * | timestamp header          | a `Date`                                           | `{ '!': 'timestamp', value: <s> }`, as amqplib decodes it |
 * | `type`                    | annotation `x-basic-type`                          | `type`                  |
 * | `app_id`                  | `group_id`                                         | `appId`                 |
 * | `timestamp`               | `creation_time`                                    | `timestamp` (seconds)   |
 * | `expiration`              | header `ttl`                                       | `expiration`            |
 * | `reply_to` `q`            | `/queues/q`                                        | `replyTo` `q`           |
 * | `delivery_mode` 2         | header `durable`                                   | `deliveryMode` 2        |
 * | exchange, routing key     | annotations `x-exchange`, `x-routing-key`          | `fields`                |
 */
import type { MessageProperties } from 'amqplib';
import type { Message } from 'rhea';
import type { Delivery } from '../message/copy-message.js';

/** Annotations that map to a property or a field, not to a header. */
const NOT_HEADERS: ReadonlySet<string> = new Set(['x-exchange', 'x-routing-key', 'x-basic-type', 'x-basic-cluster-id']);

const DATA = 0x75;

type NativeMessage = {
  readonly delivery: Delivery;
  /** The body cannot be read as bytes (an AMQP 1.0 value or sequence that is not text or binary): parked with this reason. */
  readonly problem?: string;
};

/**
 * The delivery a handler sees for `message`.
 * @example fromAmqp10({ body: { typecode: 0x75, content: Buffer.from('hi') }, message_annotations: { 'x-routing-key': 'orders' } }).delivery.content // <Buffer 68 69>
 */
function fromAmqp10(message: Message): NativeMessage {
  const annotations = (message.message_annotations ?? {}) as Record<string, unknown>;
  const headers: Record<string, unknown> = {};
  const application = message.application_properties as Record<string, unknown> | undefined;
  for (const key in application) headers[key] = headerValue(application[key]);
  for (const key in annotations) if (!NOT_HEADERS.has(key)) headers[key] = headerValue(annotations[key]);
  const { content, problem } = bodyOf(message.body);
  const delivery: Delivery = {
    content,
    fields: { exchange: text(annotations['x-exchange']) ?? '', routingKey: text(annotations['x-routing-key']) ?? '' },
    properties: propertiesOf(message, annotations, headers),
  };
  return problem === undefined ? { delivery } : { delivery, problem };
}

function propertiesOf(message: Message, annotations: Record<string, unknown>, headers: Record<string, unknown>): MessageProperties {
  const creation = message.creation_time as Date | undefined;
  return {
    contentType: text(message.content_type),
    contentEncoding: text(message.content_encoding),
    headers,
    deliveryMode: message.durable === true ? 2 : undefined,
    priority: typeof message.priority === 'number' ? message.priority : undefined,
    correlationId: text(message.correlation_id),
    replyTo: replyTo(text(message.reply_to)),
    expiration: typeof message.ttl === 'number' ? String(message.ttl) : undefined,
    messageId: text(message.message_id),
    timestamp: creation instanceof Date ? Math.floor(creation.getTime() / 1000) : undefined,
    type: text(annotations['x-basic-type']),
    userId: text(message.user_id),
    appId: text(message.group_id),
    clusterId: text(annotations['x-basic-cluster-id']),
  };
}

/** A `data` section (or several, joined) as is; an AMQP value that is text or binary as its bytes. */
function bodyOf(body: unknown): { content: Buffer; problem?: string } {
  if (body === undefined || body === null) return { content: Buffer.alloc(0) };
  if (Buffer.isBuffer(body)) return { content: body };
  if (typeof body === 'string') return { content: Buffer.from(body, 'utf8') };
  const section = body as { typecode?: unknown; content?: unknown; multiple?: unknown };
  if (section.typecode === DATA) {
    if (Buffer.isBuffer(section.content)) return { content: section.content };
    if (section.multiple === true && Array.isArray(section.content)) return { content: Buffer.concat(section.content as Buffer[]) };
  }
  const what = typeof section.typecode === 'number' ? `an AMQP 1.0 section 0x${section.typecode.toString(16)}` : `an AMQP 1.0 value (${typeof body})`;
  return { content: Buffer.alloc(0), problem: `the body is ${what}, not bytes or text: a handler of bytes cannot read it` };
}

/** Dates as amqplib decodes an AMQP 0-9-1 timestamp; every other value as rhea decoded it. */
function headerValue(value: unknown): unknown {
  return value instanceof Date ? { '!': 'timestamp', value: Math.floor(value.getTime() / 1000) } : value;
}

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return undefined;
}

/** RabbitMQ gives a 0-9-1 `reply_to` of a queue as the address `/queues/<name>`. */
function replyTo(address: string | undefined): string | undefined {
  if (address === undefined || !address.startsWith('/queues/')) return address;
  try {
    return decodeURIComponent(address.slice('/queues/'.length));
  } catch {
    return address;
  }
}

export { fromAmqp10 };
