import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Channel } from 'amqplib';
import { ShortLivedConsumer } from '../../shared/amqp/short-lived-consumer.js';
import { uniqueName } from '../helpers/broker.js';
import { useTestBroker } from '../helpers/topology.js';

const testBroker = useTestBroker();

describe('ShortLivedConsumer on the broker', () => {
  let channel: Channel;
  let queue: string;

  beforeEach(async () => {
    const broker = testBroker();
    queue = uniqueName('consumer');
    broker.trackQueue(queue);
    await broker.channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    channel = await broker.connection.createChannel();
  });

  afterEach(async () => {
    await channel.close().catch(() => undefined);
  });

  it('hands out deliveries in tag order, then undefined once the queue stays empty for the timeout', async () => {
    // Prepare
    for (let i = 0; i < 5; i++) testBroker().channel.sendToQueue(queue, Buffer.from(String(i)));
    const consumer = await ShortLivedConsumer.start(channel, queue, 3);
    // Act
    const bodies: string[] = [];
    const tags: number[] = [];
    for (let message = await consumer.take(2000); message; message = await consumer.take(300)) {
      bodies.push(message.content.toString());
      tags.push(message.fields.deliveryTag);
      channel.ack(message);
    }
    // Assess
    expect(bodies).toEqual(['0', '1', '2', '3', '4']);
    expect(tags).toEqual([...tags].sort((a, b) => a - b));
    await consumer.stop();
  });

  it('honours a shorter wait after a longer one (its timer outlives the first wait)', async () => {
    // Prepare: a long first wait, ended early by a delivery
    const consumer = await ShortLivedConsumer.start(channel, queue, 10);
    const first = consumer.take(60_000);
    testBroker().channel.sendToQueue(queue, Buffer.from('x'));
    const delivered = await first;
    if (delivered) channel.ack(delivered);
    // Act
    const startedAt = Date.now();
    const second = await consumer.take(200);
    const waitedMs = Date.now() - startedAt;
    // Assess: the second wait ended on its own 200 ms deadline, long before the first one's
    expect(delivered?.content.toString()).toBe('x');
    expect(second).toBeUndefined();
    expect(waitedMs).toBeLessThan(30_000);
    await consumer.stop();
  });

  it('ends a waiting take at once when stopOn aborts, and every later one, without waiting for the timeout', async () => {
    // Prepare
    const stopOn = new AbortController();
    const consumer = await ShortLivedConsumer.start(channel, queue, 10, { stopOn: stopOn.signal });
    const waiting = consumer.take(60_000);
    // Act
    stopOn.abort(new Error('connection lost'));
    // Assess
    await expect(waiting).resolves.toBeUndefined();
    await expect(consumer.take(60_000)).resolves.toBeUndefined();
    await consumer.stop();
  });

  it('stop ends a waiting take and keeps deliveries that arrived before the cancel-ok for takeBuffered', async () => {
    // Prepare
    for (let i = 0; i < 4; i++) testBroker().channel.sendToQueue(queue, Buffer.from(String(i)));
    const consumer = await ShortLivedConsumer.start(channel, queue, 4);
    const first = await consumer.take(2000);
    // Wait until the broker has handed the other three to the consumer (none left ready): they come before the cancel-ok.
    await vi.waitFor(async () => expect(await testBroker().messageCount(queue), `ready messages in ${queue}`).toBe(0), { timeout: 5000, interval: 10 });
    // Act
    await consumer.stop();
    const buffered = consumer.takeBuffered();
    // Assess
    expect(first?.content.toString()).toBe('0');
    expect(buffered.map((m) => m.content.toString())).toEqual(['1', '2', '3']);
    for (const message of [first, ...buffered]) if (message) channel.nack(message, false, true);
  });
});
