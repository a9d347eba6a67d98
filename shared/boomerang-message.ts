import type { ConsumeMessage } from 'amqplib';
import { originalExchange, originalRoutingKey } from './copy-message.js';
import { UnrecoverableError } from './errors.js';
import type { BoomerangMessage } from './message.js';

/** Wraps a delivery for the handler; the body is parsed only if the handler calls `json()`. */
function toBoomerangMessage(delivery: ConsumeMessage, queue: string, retryNo: number): BoomerangMessage {
  const { headers, ...properties } = delivery.properties;
  return Object.freeze({
    body: delivery.content,
    json<T>(): T {
      if (delivery.content.length === 0) throw new UnrecoverableError('message body is empty; expected JSON');
      try {
        return JSON.parse(delivery.content.toString('utf8')) as T;
      } catch (error) {
        throw new UnrecoverableError(`message body is not valid JSON (${(error as Error).message})`, { cause: error });
      }
    },
    headers: headers ?? {},
    properties,
    retryNo,
    queue,
    routingKey: originalRoutingKey(delivery),
    exchange: originalExchange(delivery),
  });
}

export { toBoomerangMessage };
