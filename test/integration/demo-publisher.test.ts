import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectManaged } from '../../shared/amqp/managed-connection.js';
import { publishDemoMessages } from '../../shared/demo/demo-publisher.js';
import { AMQP_URL, TestBroker, uniqueName } from '../helpers/broker.js';

describe('publishDemoMessages on the broker', () => {
  let broker: TestBroker;

  beforeEach(async () => {
    broker = await TestBroker.open();
  });

  afterEach(async () => {
    await broker.close();
  });

  it('publishes every message, confirmed, persistent JSON with its message id', async () => {
    // Prepare
    const queue = uniqueName('demo-publish');
    broker.trackQueue(queue);
    await broker.channel.assertQueue(queue, { durable: true });
    const managed = await connectManaged({ urls: AMQP_URL.split(','), connectTimeoutMs: 5000, connectionName: uniqueName('test-demo-publisher') });
    // Act
    const confirmed = await publishDemoMessages(
      managed,
      queue,
      Array.from({ length: 500 }, (_, i) => ({ messageId: `order-${i}`, body: { order: i } })),
    ).finally(() => managed.close());
    // Assess
    expect(confirmed).toBe(500);
    const messages = await broker.drain(queue, 500, 5000);
    expect(messages.map((m) => m.properties.messageId)).toEqual(Array.from({ length: 500 }, (_, i) => `order-${i}`));
    expect(messages[7]).toMatchObject({ properties: { deliveryMode: 2, contentType: 'application/json' } });
    expect(JSON.parse(messages[7]?.content.toString() ?? '')).toEqual({ order: 7 });
  });

  it('names the endpoint and what went wrong when no broker answers', async () => {
    // Act: nothing listens on port 1
    const connecting = connectManaged({ urls: ['amqp://guest:secret@127.0.0.1:1'], connectTimeoutMs: 1500, connectionName: 'test-demo-publisher' });
    // Assess
    await expect(connecting).rejects.toMatchObject({
      name: 'BrokerConnectionError',
      reason: 'refused',
      message: expect.stringContaining('amqp://guest:***@127.0.0.1:1'),
    });
  });
});
