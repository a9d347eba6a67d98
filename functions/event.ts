import { createEventFunction } from '../shared/event/event-function.js';
import { handle as deliverWebhook } from '../shared/examples/webhooks/webhook-delivery.js';

/** The deployed handler: webhook delivery. */
const handler = createEventFunction(deliverWebhook);

export { createEventFunction, handler };
