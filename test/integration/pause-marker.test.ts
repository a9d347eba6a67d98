import { describe, expect, it } from 'vitest';
import { amqp091PauseMarker } from '../../shared/amqp/pause-marker.js';
import { pauseMarkerArguments, pauseMarkerQueue } from '../../shared/amqp/pause-marker.js';
import { Amqp10Management } from '../../shared/native/amqp10-management.js';
import { amqp10PauseMarker } from '../../shared/native/amqp10-pause-marker.js';
import { connectAmqp10 } from '../../shared/native/amqp10-connection.js';
import { NativeReceiver } from '../../shared/native/native-receiver.js';
import { AMQP_URL, sleep, uniqueName } from '../helpers/broker.js';
import { BROKER_VERSION, NATIVE_BROKER } from '../helpers/broker-version.js';
import { useTestBroker } from '../helpers/topology.js';

const testBroker = useTestBroker();

describe(`the pause marker over AMQP 0-9-1 on RabbitMQ ${BROKER_VERSION}`, () => {
  it('reads no pause where no marker queue exists, declaring it as the builders say (no 404 for the broker to log), and the connection lives on', async () => {
    // Prepare
    const broker = testBroker();
    const workQueue = uniqueName('pause');
    broker.trackQueue(workQueue);
    const marker = amqp091PauseMarker(broker.connection, workQueue);
    // Act
    const until = await marker.read();
    // Assess
    expect(until).toBeUndefined();
    // Declared, not looked up: a passive declare of a missing queue is an error line in the broker's log.
    const declared = await broker.channel.checkQueue(pauseMarkerQueue(workQueue));
    expect(declared).toMatchObject({ messageCount: 0, consumerCount: 0 });
    await broker.channel.assertQueue(pauseMarkerQueue(workQueue), { durable: true, arguments: pauseMarkerArguments() });
    expect(await marker.read()).toBeUndefined();
  });

  it('writes one marker, the latest, reads it without taking it, and declares the queue as the builders say', async () => {
    // Prepare
    const broker = testBroker();
    const workQueue = uniqueName('pause');
    broker.trackQueue(workQueue);
    const marker = amqp091PauseMarker(broker.connection, workQueue);
    const now = Date.now();
    // Act
    await marker.write({ untilMs: now + 20_000, queue: 'q', errorName: 'E', messageId: undefined }, 'f');
    await marker.write({ untilMs: now + 30_000, queue: 'q', errorName: 'PartnerRateLimitedError', messageId: undefined }, 'orders-pull');
    const first = await marker.read();
    const second = await marker.read();
    // Assess
    expect(first).toBe(now + 30_000);
    expect(second).toBe(now + 30_000);
    expect(await broker.messageCount(pauseMarkerQueue(workQueue))).toBe(1);
    const [message] = await broker.drain(pauseMarkerQueue(workQueue), 1);
    expect(message?.properties).toMatchObject({ deliveryMode: 2, contentType: 'application/json', appId: 'orders-pull' });
    expect(Number(message?.properties.expiration)).toBeGreaterThan(29_000);
    expect(JSON.parse(message!.content.toString())).toMatchObject({ reason: 'PartnerRateLimitedError', by: 'orders-pull', untilMs: now + 30_000 });
  });

  it('is read by invocations at once, each seeing the pause (one reading it hides it from the count, not its reader)', async () => {
    // Prepare
    const broker = testBroker();
    const workQueue = uniqueName('pause');
    broker.trackQueue(workQueue);
    const marker = amqp091PauseMarker(broker.connection, workQueue);
    const untilMs = Date.now() + 30_000;
    await marker.write({ untilMs, queue: 'q', errorName: 'E', messageId: undefined }, 'f');
    // Act
    const reads = await Promise.all(Array.from({ length: 6 }, () => marker.read()));
    // Assess
    expect(reads).toEqual(Array.from({ length: 6 }, () => untilMs));
    expect(await broker.messageCount(pauseMarkerQueue(workQueue))).toBe(1);
  });

  it('ends by itself: the broker drops the marker when the pause is over', async () => {
    // Prepare
    const broker = testBroker();
    const workQueue = uniqueName('pause');
    broker.trackQueue(workQueue);
    const marker = amqp091PauseMarker(broker.connection, workQueue);
    await marker.write({ untilMs: Date.now() + 300, queue: 'q', errorName: 'E', messageId: undefined }, 'f');
    expect(await marker.read()).toBeGreaterThan(Date.now());
    // Act: past the pause (300 ms), when the broker's per-message TTL drops the marker
    await sleep(500);
    // Assess
    expect(await marker.read()).toBeUndefined();
    expect(await broker.messageCount(pauseMarkerQueue(workQueue))).toBe(0);
  });
});

describe.runIf(NATIVE_BROKER)(`the pause marker over AMQP 1.0 on RabbitMQ ${BROKER_VERSION}`, () => {
  it("reads no pause where none is, writes the latest, reads it back, and the work queue's link lives on beside it", async () => {
    // Prepare
    const broker = testBroker();
    const workQueue = uniqueName('pause');
    broker.trackQueue(workQueue);
    await broker.channel.assertQueue(workQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    const amqp10 = await connectAmqp10({ urls: [AMQP_URL], connectTimeoutMs: 5000, connectionName: uniqueName('amqp10') });
    try {
      const management = await Amqp10Management.open(amqp10.connection);
      const receiver = await NativeReceiver.open(amqp10.connection, workQueue, 1);
      const marker = amqp10PauseMarker(amqp10.connection, async () => management, workQueue);
      const now = Date.now();
      // Act
      const before = await marker.read();
      await marker.write({ untilMs: now + 20_000, queue: 'q', errorName: 'E', messageId: undefined }, 'f');
      await marker.write({ untilMs: now + 30_000, queue: 'q', errorName: 'PartnerRateLimitedError', messageId: undefined }, 'orders-pull');
      const after = await marker.read();
      broker.channel.sendToQueue(workQueue, Buffer.from('still here'));
      const taken = await receiver.take(2000);
      // Assess
      expect(before).toBeUndefined();
      expect(after).toBe(now + 30_000);
      // The first read declared the marker queue (a GET of a missing one is a line in the broker's log), as the builders say.
      expect((await management.getQueue(pauseMarkerQueue(workQueue)))?.arguments).toEqual(pauseMarkerArguments());
      expect(await broker.messageCount(pauseMarkerQueue(workQueue))).toBe(1);
      const [message] = await broker.drain(pauseMarkerQueue(workQueue), 1);
      expect(JSON.parse(message!.content.toString())).toMatchObject({ reason: 'PartnerRateLimitedError', by: 'orders-pull', untilMs: now + 30_000 });
      expect(message?.properties).toMatchObject({ deliveryMode: 2, contentType: 'application/json' });
      expect(taken).toBeDefined();
    } finally {
      await amqp10.close();
    }
  });
});
