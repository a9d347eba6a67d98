/**
 * A sample `aws:rmq` event, shaped as Amazon MQ's event source writes one (pure): for
 * `boomerang invoke event --sample`, so that trying the event function needs no hand-written JSON.
 * Strings in headers arrive as their bytes, unset properties as null, the body as base64.
 */
import type { RmqEvent, RmqMessage } from './rmq-event.js';

/** The event source's ARN in a sample: a broker that exists nowhere. */
const SAMPLE_ARN = 'arn:aws:mq:eu-west-1:000000000000:broker:sample:b-00000000-0000-0000-0000-000000000000';

/** One message of a sample event: its body, text headers, and a message id. */
type SampleMessage = { readonly body: Buffer; readonly messageId: string; readonly headers?: Readonly<Record<string, string>>; readonly contentType?: string };

/**
 * An event carrying `messages` for `queue` on `vhost`, each persistent and not redelivered.
 * @example sampleEvent('orders', '/', [{ body: Buffer.from('{}'), messageId: 's-0' }]).rmqMessagesByQueue['orders::/']?.length // 1
 */
function sampleEvent(queue: string, vhost: string, messages: readonly SampleMessage[]): RmqEvent {
  return { eventSource: 'aws:rmq', eventSourceArn: SAMPLE_ARN, rmqMessagesByQueue: { [`${queue}::${vhost}`]: messages.map(rmqMessageOf) } };
}

function rmqMessageOf(message: SampleMessage): RmqMessage {
  const headers =
    message.headers === undefined ? null : Object.fromEntries(Object.entries(message.headers).map(([k, v]) => [k, { bytes: [...Buffer.from(v)] }]));
  return {
    basicProperties: {
      contentType: message.contentType ?? null,
      contentEncoding: null,
      headers,
      deliveryMode: 2,
      priority: null,
      correlationId: null,
      replyTo: null,
      expiration: null,
      messageId: message.messageId,
      timestamp: null,
      type: null,
      userId: null,
      appId: null,
      clusterId: null,
      bodySize: message.body.length,
    },
    redelivered: false,
    data: message.body.toString('base64'),
  };
}

export { sampleEvent };
export type { SampleMessage };
