import { createPullFunction } from '../shared/engine/pull-function.js';
import { handle as deliverWebhook } from '../shared/examples/webhooks/webhook-delivery.js';

/** The deployed handler: webhook delivery. */
const handler = createPullFunction(deliverWebhook);

export { createPullFunction, handler };
