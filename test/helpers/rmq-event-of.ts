import type { MessageProperties } from 'amqplib';
import type { RmqBasicProperties, RmqEvent, RmqFieldValue, RmqMessage } from '../../shared/event/rmq-event.js';

/** What the event source mapping reads of one delivery (amqplib's `ConsumeMessage` has it). */
type MappedDelivery = {
  readonly content: Buffer;
  readonly fields: { readonly redelivered: boolean };
  readonly properties: MessageProperties;
};

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

/**
 * The `aws:rmq` event the Amazon MQ event source mapping builds from real deliveries of one queue, as
 * far as its shape is documented (the AWS sample, `aws-lambda-go/events/rabbitmq.go`): the body in
 * base64, every property (null when unset), headers with strings as Java's signed bytes, numbers as
 * numbers, the timestamp as Java prints a date, and the delivery's `redelivered` flag.
 * @example rmqEventOf('orders', [delivery]).rmqMessagesByQueue['orders::/']
 */
function rmqEventOf(queue: string, deliveries: readonly MappedDelivery[], vhost = '/'): RmqEvent {
  return {
    eventSource: 'aws:rmq',
    eventSourceArn: 'arn:aws:mq:eu-west-1:123456789012:broker:emulated:b-00000000-0000-0000-0000-000000000000',
    rmqMessagesByQueue: { [`${queue}::${vhost}`]: deliveries.map(rmqMessageOf) },
  };
}

function rmqMessageOf(delivery: MappedDelivery): RmqMessage {
  const p = delivery.properties;
  const basicProperties: RmqBasicProperties = {
    contentType: p.contentType ?? null,
    contentEncoding: p.contentEncoding ?? null,
    headers: p.headers === undefined ? null : (fieldValue(p.headers) as Record<string, RmqFieldValue>),
    deliveryMode: p.deliveryMode ?? null,
    priority: p.priority ?? null,
    correlationId: p.correlationId ?? null,
    replyTo: p.replyTo ?? null,
    expiration: p.expiration ?? null,
    messageId: p.messageId ?? null,
    timestamp: p.timestamp === undefined ? null : javaDate(Number(p.timestamp)),
    type: p.type ?? null,
    userId: p.userId ?? null,
    appId: p.appId ?? null,
    clusterId: p.clusterId ?? null,
    bodySize: delivery.content.length,
  };
  return { basicProperties, redelivered: delivery.fields.redelivered, data: delivery.content.toString('base64') };
}

/** A header value as the mapping's Java poller serialises it: a long string (or bytes) as `{ bytes }`, signed. */
function fieldValue(value: unknown): RmqFieldValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return javaBytes(Buffer.from(value, 'utf8'));
  if (Buffer.isBuffer(value)) return javaBytes(value);
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (Array.isArray(value)) return value.map(fieldValue);
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, fieldValue(inner)]));
  return String(value);
}

function javaBytes(bytes: Buffer): { bytes: number[] } {
  return { bytes: [...bytes].map((b) => (b > 127 ? b - 256 : b)) };
}

/** Epoch seconds as Java's default date format prints them in UTC: `Jan 1, 1970, 12:33:41 AM`. */
function javaDate(seconds: number): string {
  const d = new Date(seconds * 1000);
  const hour = d.getUTCHours() % 12 === 0 ? 12 : d.getUTCHours() % 12;
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()}, ${hour}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} ${d.getUTCHours() < 12 ? 'AM' : 'PM'}`;
}

export { rmqEventOf };
