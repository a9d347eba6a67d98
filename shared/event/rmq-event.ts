/**
 * The event the Lambda event source mapping for Amazon MQ for RabbitMQ (`aws:rmq`) hands the function.
 * Neither `@types/aws-lambda` nor Powertools define it; this mirrors `aws-lambda-go/events/rabbitmq.go`
 * and the AWS sample, with every property nullable: a real event shows `null` for every property the
 * publisher did not set, `"headers": null` included. The decoder still reads the event as `unknown`:
 * these types say what should arrive, not what is trusted.
 */

/** A long string (and, *inferred*, a byte array) header value: its bytes, as Java (signed) or unsigned numbers. */
type RmqBytes = { readonly bytes: readonly number[] };

/** A header or nested table value: strings arrive as `RmqBytes`, numbers as numbers, tables as objects. */
type RmqFieldValue = RmqBytes | number | boolean | string | null | readonly RmqFieldValue[] | { readonly [key: string]: RmqFieldValue };

/** The AMQP basic properties of one message; every field is null when the publisher did not set it. */
type RmqBasicProperties = {
  readonly contentType: string | null;
  readonly contentEncoding: string | null;
  readonly headers: Readonly<Record<string, RmqFieldValue>> | null;
  /** 1 transient, 2 persistent. */
  readonly deliveryMode: number | null;
  readonly priority: number | null;
  readonly correlationId: string | null;
  readonly replyTo: string | null;
  /** A per-message TTL in milliseconds, as a string. */
  readonly expiration: string | null;
  readonly messageId: string | null;
  /** A Java-style date, `"Jan 1, 1970, 12:33:41 AM"`: not ISO, not epoch. */
  readonly timestamp: string | null;
  readonly type: string | null;
  readonly userId: string | null;
  readonly appId: string | null;
  readonly clusterId: string | null;
  /** The body's size in bytes. */
  readonly bodySize: number | null;
};

/** One message of the batch. */
type RmqMessage = {
  readonly basicProperties: RmqBasicProperties | null;
  /** True when the broker delivered it before (the whole batch came back). */
  readonly redelivered: boolean | null;
  /** The raw body, base64. */
  readonly data: string | null;
};

/**
 * The `aws:rmq` event. Keys of `rmqMessagesByQueue` are `"<queue>::<vhost>"`.
 * @example
 * const event: RmqEvent = {
 *   eventSource: 'aws:rmq',
 *   eventSourceArn: 'arn:aws:mq:eu-west-1:123456789012:broker:orders:b-1234',
 *   rmqMessagesByQueue: { 'orders::/': [{ basicProperties: null, redelivered: false, data: 'e30=' }] },
 * };
 */
type RmqEvent = {
  readonly eventSource: 'aws:rmq';
  readonly eventSourceArn: string;
  readonly rmqMessagesByQueue: Readonly<Record<string, readonly RmqMessage[]>>;
};

/** A key of `rmqMessagesByQueue`, split. */
type RmqQueueKey = {
  /** Undefined when the key names no queue (empty, or only `::vhost`). */
  readonly queue: string | undefined;
  /** Undefined when the key carries no `::`. */
  readonly vhost: string | undefined;
};

/**
 * Splits `"<queue>::<vhost>"` at the LAST `::`: a queue name may contain `::`, while a vhost
 * containing `::` would be a strange choice (and Amazon MQ's default is `/`).
 * @example parseQueueKey('orders::/') // { queue: 'orders', vhost: '/' }
 */
function parseQueueKey(key: string): RmqQueueKey {
  const at = key.lastIndexOf('::');
  const queue = at === -1 ? key : key.slice(0, at);
  return { queue: queue === '' ? undefined : queue, vhost: at === -1 ? undefined : key.slice(at + 2) };
}

export { parseQueueKey };
export type { RmqBasicProperties, RmqEvent, RmqFieldValue, RmqMessage };
