import { describe, expect, it } from 'vitest';
import { brokerPauseMarker } from '../../shared/amqp/broker-pause-marker.js';
import { pauseMarkerQueue } from '../../shared/amqp/pause-marker.js';
import { sleep, uniqueName } from '../helpers/broker.js';
import { BROKER_VERSION } from '../helpers/broker-version.js';
import { useTestBroker } from '../helpers/topology.js';

const testBroker = useTestBroker();

describe(`the pause marker over AMQP 0-9-1 on RabbitMQ ${BROKER_VERSION}`, () => {
  it('reads no pause where no marker queue exists, and the connection lives on', async () => {
    // Prepare
    const broker = testBroker();
    const workQueue = uniqueName('pause');
    broker.trackQueue(workQueue);
    const marker = brokerPauseMarker(broker.connection, workQueue);
    // Act
    const until = await marker.read();
    // Assess
    expect(until).toBeUndefined();
    expect(await broker.exists('queue', pauseMarkerQueue(workQueue))).toBe(false);
    expect(await marker.read()).toBeUndefined();
  });

  it('writes one marker, the latest, reads it without taking it, and declares the queue as the builders say', async () => {
    // Prepare
    const broker = testBroker();
    const workQueue = uniqueName('pause');
    broker.trackQueue(workQueue);
    const marker = brokerPauseMarker(broker.connection, workQueue);
    const now = Date.now();
    // Act
    await marker.write({ untilMs: now + 20_000, reason: 'E', by: 'f' });
    await marker.write({ untilMs: now + 30_000, reason: 'PartnerRateLimitedError', by: 'orders-pull' });
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

  it('ends by itself: the broker drops the marker when the pause is over', async () => {
    // Prepare
    const broker = testBroker();
    const workQueue = uniqueName('pause');
    broker.trackQueue(workQueue);
    const marker = brokerPauseMarker(broker.connection, workQueue);
    await marker.write({ untilMs: Date.now() + 300, reason: 'E', by: 'f' });
    expect(await marker.read()).toBeGreaterThan(Date.now());
    // Act
    await sleep(500);
    // Assess
    expect(await marker.read()).toBeUndefined();
    expect(await broker.messageCount(pauseMarkerQueue(workQueue))).toBe(0);
  });
});
