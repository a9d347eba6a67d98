import { defineQueue } from 'boomerang-rabbitmq';
import { createWebhookDelivery, httpTimeoutMsFromEnv } from '../shared/examples/webhooks/webhook-delivery.js';

/** Webhook delivery: each message is one HTTP request to a customer's endpoint. */
export const { queue, pull, event } = defineQueue({
  name: 'webhooks',
  handler: createWebhookDelivery({ httpTimeoutMs: httpTimeoutMsFromEnv() }),
  workQueue: 'boomerang.webhooks',
  // Customers' endpoints are down for minutes to hours: 8 retries, the last about 4 minutes after the one before.
  retry: { maxRetries: 8, initialDelayMs: 1000, multiplier: 2, maxDelayMs: 3_600_000, jitter: 0.1 },
  batchSize: 100,
  concurrency: 8,
  advanced: { delayMode: 'tiers', ackOrder: 'publish-then-ack' },
  deploy: { modes: ['pull', 'event'], acknowledgeCompetingModes: true, pull: { rateMinutes: 1 }, event: { batchSize: 100 } },
});
