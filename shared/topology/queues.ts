/**
 * Building blocks shared by every queue Boomerang declares: the queue-type arguments, the
 * dead-lettering arguments, and the AMQP name-length rule. Pure; they return new objects.
 */
import { ConfigError } from '../errors.js';
import type { QueueType } from './types.js';

type QueueArguments = Record<string, string | number>;

/** AMQP `shortstr`: queue names, exchange names and routing keys are at most 255 bytes. */
const MAX_NAME_BYTES = 255;

/** The default exchange: routes a message to the queue named by its routing key. */
const DEFAULT_EXCHANGE = '';

/** The queue type argument every Boomerang queue is declared with. */
function queueTypeArguments(queueType: QueueType): QueueArguments {
  return {
    // Explicit type, so a policy or a broker default can never turn a replicated queue into a classic one.
    'x-queue-type': queueType,
  };
}

/**
 * Where the broker republishes a message that expires or is rejected, and (on quorum queues) how
 * safely. Without `routingKey` the message keeps its own routing key.
 */
function deadLetterArguments(queueType: QueueType, exchange: string, routingKey?: string): QueueArguments {
  const args: QueueArguments = {
    // The broker moves an expired or rejected message here instead of dropping it.
    'x-dead-letter-exchange': exchange,
  };
  if (routingKey !== undefined) {
    // A fixed key: the message reaches exactly this queue, never other queues bound with its original key.
    args['x-dead-letter-routing-key'] = routingKey;
  }
  if (queueType === 'quorum') {
    // The default is at-most-once: the broker would drop the message when the republish fails.
    args['x-dead-letter-strategy'] = 'at-least-once';
    // At-least-once dead-lettering silently falls back to at-most-once under any other overflow mode.
    args['x-overflow'] = 'reject-publish';
  }
  return args;
}

/** Throws a `ConfigError` unless `name` is a usable queue name (1 to 255 bytes of UTF-8). */
function assertQueueName(name: string, what: string): void {
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes === 0 || bytes > MAX_NAME_BYTES) {
    throw new ConfigError(`Expected ${what} to be a queue name of 1 to ${MAX_NAME_BYTES} bytes, got '${name}' (${bytes} bytes)`);
  }
}

export { assertQueueName, DEFAULT_EXCHANGE, deadLetterArguments, MAX_NAME_BYTES, queueTypeArguments };
export type { QueueArguments };
