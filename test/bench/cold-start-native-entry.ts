/**
 * The native cold start's bundle (test/bench/bundles.ts): the webhooks queue of functions/webhooks.ts
 * as a native queue (`delayMode: 'native'`, RabbitMQ 4.3+), its pull function as `handler`, bundled
 * as the functions are (`functionEntries`): for the pull mode only, and, as its code sets the delay
 * mode, without the copy path. rhea sits behind a dynamic import at the first native connection
 * (shared/native/amqp10-attempt.ts), so esbuild puts it in a chunk that loads then: the cold start
 * counts it.
 */
import { defineQueue } from 'boomerang-rabbitmq';
import { createWebhookDelivery, httpTimeoutMsFromEnv } from '../../shared/examples/webhooks/webhook-delivery.js';

/** The bench's own work queue, so that the cold starts never touch the webhooks queue. */
const NATIVE_COLD_START_QUEUE = 'boomerang.bench.webhooks-native';

const { queue, pull } = defineQueue({
  name: 'webhooks-native',
  handler: createWebhookDelivery({ httpTimeoutMs: httpTimeoutMsFromEnv() }),
  workQueue: NATIVE_COLD_START_QUEUE,
  retry: { maxRetries: 8, initialDelayMs: 1000, multiplier: 2, maxDelayMs: 3_600_000, jitter: 0.1 },
  advanced: { delayMode: 'native' },
  batchSize: 100,
  concurrency: 8,
  deploy: { modes: ['pull'], pull: { rateMinutes: 1 } },
});

export { pull, pull as handler, NATIVE_COLD_START_QUEUE, queue };
