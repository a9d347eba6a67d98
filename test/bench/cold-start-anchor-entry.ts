/**
 * The cold-start anchor, bundled like a function (test/bench/bundles.ts): the least a hand-written
 * amqplib consumer does with the same handler as the webhooks function. Connect, consume the work
 * queue, hand the first message to the webhook delivery of functions/webhooks.ts, ack. No config, no
 * retry path, no delay-path check, no logs: what Boomerang adds is the difference.
 */
import amqp from 'amqplib';
import { createWebhookDelivery, httpTimeoutMsFromEnv } from '../../shared/examples/webhooks/webhook-delivery.js';
import type { BoomerangMessage } from '../../shared/message/message.js';

const deliver = createWebhookDelivery({ httpTimeoutMs: httpTimeoutMsFromEnv() });

/** Handles one message of `queue` and closes; rejects when the handler throws. */
async function handleFirst(url: string, queue: string): Promise<void> {
  const connection = await amqp.connect(url, { noDelay: true });
  const channel = await connection.createChannel();
  await channel.prefetch(100);
  const signal = new AbortController().signal;
  let tag = '';
  await new Promise<void>((resolve, reject) => {
    channel
      .consume(queue, (delivery) => {
        if (delivery === null) return;
        // Only what the webhook delivery reads: a hand-written consumer passes its own shape.
        const message = { body: delivery.content } as BoomerangMessage;
        Promise.resolve(deliver(message, { signal, functionName: 'anchor' })).then(() => {
          channel.ack(delivery);
          resolve();
        }, reject);
      })
      .then((ok) => (tag = ok.consumerTag), reject);
  });
  await channel.cancel(tag);
  await connection.close();
}

export { handleFirst };
