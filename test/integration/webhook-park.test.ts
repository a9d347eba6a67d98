import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWebhookDelivery } from '../../shared/examples/webhooks/webhook-delivery.js';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { runPull } from '../../shared/pull/pull.js';
import { TestBroker } from '../helpers/broker.js';
import { publishJson, setUpTopology, testConfig } from '../helpers/engine.js';
import { recordingLogger } from '../helpers/fakes.js';

/**
 * A webhook URL's path and query are often its secret (`/services/T0/B0/<secret>`, `?token=`). A
 * message whose URL does not parse is parked at once; neither its parked copy (reason, error
 * message, stack) nor the log may quote that URL.
 */
describe('the webhook function on a message with an invalid url', () => {
  let broker: TestBroker;

  beforeEach(async () => {
    broker = await TestBroker.open();
  });

  afterEach(async () => {
    await broker.close();
  });

  it('parks it with a reason and a log that hold neither its path nor its token', async () => {
    // Prepare
    const config = testConfig();
    await setUpTopology(broker, config);
    publishJson(broker, config.workQueue, { url: 'https://hooks example/services/T0/B0/s3cr3tPath?token=abc123', body: { text: 'hi' } }, { messageId: 'w-1' });
    const logger = recordingLogger();

    // Act
    const summary = await runPull({ config, handler: createWebhookDelivery(), budgetMs: 5000, log: logger.log });

    // Assess
    expect(summary).toMatchObject({ received: 1, parked: 1 });
    const [parked] = await broker.drain(config.parkingQueue, 1);
    expect(parked?.properties.headers?.[BoomerangHeader.errorMessage]).toBe(
      'webhook message has no valid url: got a string of 60 characters that is not an absolute URL; expected an absolute http(s) URL',
    );
    const headers = JSON.stringify(parked?.properties.headers);
    expect(logger.lines.some((line) => line.includes('message parked'))).toBe(true);
    for (const text of [headers, ...logger.lines]) expect(text).not.toMatch(/s3cr3tPath|abc123/);
  });
});
