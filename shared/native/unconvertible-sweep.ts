/**
 * RabbitMQ 4.3.6 cannot give an AMQP 1.0 consumer a message published over 0-9-1 with a `decimal`
 * header: converting it fails (`function_clause` in `mc_amqpl:from_091`) and the broker ends the whole
 * session, so the message never reaches a handler and every message that session held goes back,
 * counted as a crash. Left alone, each invocation would die on it until the queue's delivery limit
 * dead-letters it, with its neighbours handled again at each death. So the invocation that meets such
 * a death looks at the head of the work queue over 0-9-1, which reads any header, and rejects what
 * AMQP 1.0 cannot carry: the work queue dead-letters it to the parking lot as it is, byte for byte
 * (`x-death` reason `rejected`). Everything else it looked at goes back untouched (a requeueing nack,
 * which 4.3 does not count).
 */
import type { ConsumeMessage } from 'amqplib';
import type { Config } from '../config/config.js';
import { connectFromConfigLate } from './amqp091-late.js';
import type { Logger } from '../observability/logger.js';

/** The broker's report when it ended a session over a message it could not convert. */
function isUnconvertible(error: unknown): boolean {
  for (
    let cause = error as { message?: unknown; description?: unknown; cause?: unknown } | undefined;
    cause !== undefined && cause !== null;
    cause = cause.cause as typeof cause
  ) {
    if (/mc_amqpl/.test(String(cause.message ?? '')) || /mc_amqpl/.test(String(cause.description ?? ''))) return true;
  }
  return false;
}

/** Whether a header value, at any depth, is an AMQP decimal (as amqplib decodes one). */
function holdsDecimal(value: unknown, depth = 0): boolean {
  if (typeof value !== 'object' || value === null || Buffer.isBuffer(value) || depth > 16) return false;
  if ((value as { '!'?: unknown })['!'] === 'decimal') return true;
  return Object.values(value).some((inner) => holdsDecimal(inner, depth + 1));
}

/**
 * Takes up to `window` messages from the head of the work queue over 0-9-1, rejects (so the broker
 * parks) those AMQP 1.0 cannot carry, and gives the rest back. Resolves with how many were parked.
 * @example if (isUnconvertible(failure)) await sweepUnconvertible(config, log, config.batchSize);
 */
async function sweepUnconvertible(config: Config, log: Logger, window: number): Promise<number> {
  const connectFromConfig = await connectFromConfigLate();
  const broker = await connectFromConfig(config, { connectionName: `${config.functionName}-sweep`, log });
  try {
    const channel = await broker.connection.createChannel();
    await channel.prefetch(window);
    const taken: ConsumeMessage[] = [];
    let arrived: () => void = () => undefined;
    const { consumerTag } = await channel.consume(config.workQueue, (message) => {
      if (message === null) return;
      taken.push(message);
      arrived();
    });
    // The window fills in one burst; a short quiet spell means the queue had no more ready.
    while (taken.length < window) {
      const before = taken.length;
      await new Promise<void>((resolve) => {
        arrived = resolve;
        setTimeout(resolve, 200);
      });
      if (taken.length === before) break;
    }
    await channel.cancel(consumerTag);
    let parked = 0;
    for (const message of taken) {
      if (holdsDecimal(message.properties.headers)) {
        channel.reject(message, false);
        parked++;
        log.error('message parked: RabbitMQ cannot give it to an AMQP 1.0 consumer (a decimal header), so delayMode native cannot handle it', {
          messageId: message.properties.messageId,
          queue: config.workQueue,
          parkingQueue: config.parkingQueue,
        });
      } else {
        channel.nack(message, false, true);
      }
    }
    await channel.close();
    return parked;
  } finally {
    await broker.close();
  }
}

export { holdsDecimal, isUnconvertible, sweepUnconvertible };
