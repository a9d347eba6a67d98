import { type Delivery, originalExchange, originalRoutingKey } from './copy-message.js';
import { UnrecoverableError } from '../errors.js';
import type { BoomerangMessage } from './message.js';

const NO_HEADERS: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * Wraps a delivery for the handler, frozen, and its properties with it: a handler cannot change what
 * a copy is later built from. Built for every message, so nothing is copied: `properties` is the
 * delivery's own object (measured: copying it without its headers cost more than the rest of the
 * wrapper), and the body is parsed only if the handler calls `json()`.
 */
function toBoomerangMessage(delivery: Delivery, queue: string, retryNo: number): BoomerangMessage {
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
    headers: delivery.properties.headers ?? NO_HEADERS,
    properties: Object.freeze(delivery.properties),
    retryNo,
    queue,
    routingKey: originalRoutingKey(delivery),
    exchange: originalExchange(delivery),
  });
}

export { toBoomerangMessage };
