/**
 * The native transport's contract on the broker (issue 31): driven through the `Transport` interface
 * alone, each verdict is settled with the AMQP 1.0 outcome native-annotations.ts names, and what
 * RabbitMQ 4.3 then does with the message (delay it, dead-letter it, hand it back, drop it) is read
 * back from the broker, over 0-9-1 and over AMQP 1.0. On an older broker the transport refuses to open.
 */
import type { EventContext, Message } from 'rhea';
import rhea from 'rhea';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../shared/config/config.js';
import { NativeAnnotation } from '../../shared/native/native-annotations.js';
import { connectAmqp10 } from '../../shared/native/amqp10-connection.js';
import { openNative } from '../../shared/native/native-pull.js';
import { silentLogger } from '../helpers/fakes.js';
import { AMQP_URL } from '../helpers/broker.js';
import { BROKER_VERSION, NATIVE_BROKER } from '../helpers/broker-version.js';
import { CLOCK_SLACK_MS, setUpTopology, testConfig } from '../helpers/engine.js';
import { useProxyToBroker } from '../helpers/tcp-proxy.js';
import { useTestBroker } from '../helpers/topology.js';
import {
  arrivalOf,
  asPublished,
  awaitArrivals,
  byId,
  itEndsWithItsQueueAndItsConnection,
  openTransport,
  rawHex,
  takeCount,
  takeThenStop,
  verdicts,
} from '../helpers/transport-driver.js';

const broker = useTestBroker();
const proxy = useProxyToBroker(AMQP_URL);

/** The team's headers, of several AMQP types as amqplib writes them. */
const HEADERS = { tenant: 'acme', traceparent: '00-abc-def-01', n: 7, big: 2 ** 40, ratio: 0.5 };
const HEADER_NAMES = Object.keys(HEADERS);
const BODY = Buffer.from([0, 1, 2, 0xfe, 0xff, ...Buffer.from('{"order":42}')]);
const DELAY_MS = 300;

function nativeConfig(env: Record<string, string> = {}): Config {
  return testConfig({ DELAY_MODE: 'native', ...env });
}

function publish(config: Config, messageId: string): void {
  broker().channel.sendToQueue(config.workQueue, BODY, { persistent: true, messageId, headers: HEADERS });
}

function open(config: Config) {
  return openTransport(openNative({ config, handler: () => undefined, budgetMs: 10_000, log: silentLogger }, true));
}

describe.runIf(NATIVE_BROKER)(`the native transport on RabbitMQ ${BROKER_VERSION}`, () => {
  it('settles each verdict with its outcome: accepted drops, released hands back uncounted, modified-failed delays with the annotations and counts, modified-not-failed delays uncounted, undeliverable dead-letters to the parking lot', async () => {
    // Prepare
    const config = nativeConfig({ FUNCTION_NAME: 'contract-native' });
    await setUpTopology(broker(), config);
    const ids = ['ack', 'duplicate', 'retry', 'defer', 'park', 'give-back'];
    for (const id of ids) publish(config, id);
    const reference = await asPublished(broker(), BODY, { persistent: true, messageId: 'reference', headers: HEADERS });
    const { transport, tally, deadlines } = await open(config);
    const taken = await takeCount(transport, ids.length);

    // Act: what comes back to the queue is settled once the credit is drained, or it would come back to this receiver
    for (const id of ['ack', 'duplicate']) expect(transport.settle(byId(taken, id), verdicts.ack)).toBeUndefined();
    transport.settle(byId(taken, 'park'), verdicts.park());
    expect(await transport.stopTaking()).toEqual([]);
    const settledAt = Date.now();
    transport.settle(byId(taken, 'retry'), verdicts.retry(DELAY_MS));
    transport.settle(byId(taken, 'defer'), verdicts.defer(DELAY_MS, 1));
    transport.settle(byId(taken, 'give-back'), verdicts.giveBack);
    await transport.finish(deadlines);
    await transport.close();
    const back = await awaitArrivals(config.workQueue, 3);
    const [parked, ...moreParked] = await awaitArrivals(config.parkingQueue, 1);

    // Assess
    expect(tally.current).toMatchObject({ received: 6, acked: 2, retried: 1, deferred: 1, parked: 1, requeued: 1 });
    expect(back.map((a) => a.message.properties.messageId).sort()).toEqual(['defer', 'give-back', 'retry']);
    for (const { message, raw } of [...back, parked!]) {
      const id = message.properties.messageId as string;
      expect(message.content.equals(BODY), id).toBe(true);
      expect(rawHex(raw, HEADER_NAMES), id).toEqual(rawHex(reference.raw, HEADER_NAMES));
    }
    const givenBack = arrivalOf(back, 'give-back');
    // 4.3 counts a release as an acquisition only: it never nears the delivery limit.
    expect(givenBack.message.properties.headers?.['x-delivery-count']).toBeUndefined();
    expect(givenBack.message.properties.headers?.['x-acquired-count']).toBe(1);
    expect(givenBack.message.properties.headers?.[NativeAnnotation.retryNo]).toBeUndefined();
    const retried = arrivalOf(back, 'retry');
    expect(retried.at - settledAt).toBeGreaterThanOrEqual(DELAY_MS - CLOCK_SLACK_MS);
    expect(retried.message.properties.headers).toMatchObject({
      'x-delivery-count': 1,
      [NativeAnnotation.retryNo]: 1,
      [NativeAnnotation.failedSettlements]: 1,
      [NativeAnnotation.errorName]: 'PartnerError',
      [NativeAnnotation.errorMessage]: 'partner down',
      [NativeAnnotation.firstFailureAt]: expect.any(String),
    });
    const deferred = arrivalOf(back, 'defer');
    expect(deferred.at - settledAt).toBeGreaterThanOrEqual(DELAY_MS - CLOCK_SLACK_MS);
    expect(deferred.message.properties.headers?.['x-delivery-count']).toBeUndefined();
    expect(deferred.message.properties.headers?.[NativeAnnotation.retryNo]).toBeUndefined();
    expect(moreParked).toEqual([]);
    expect(parked!.message.properties.headers).toMatchObject({
      'x-first-death-queue': config.workQueue,
      'x-first-death-reason': 'rejected',
      [NativeAnnotation.parkReason]: 'retries exhausted: 2 of 2 made',
      [NativeAnnotation.errorName]: 'PartnerError',
      [NativeAnnotation.attempts]: 3,
      [NativeAnnotation.functionName]: 'contract-native',
    });
    expect(String(parked!.message.properties.headers?.[NativeAnnotation.errorStack])).toContain('at contract');
    expect(await broker().messageCount(config.workQueue)).toBe(0);
  });

  it('delays a message an AMQP 1.0 client published, which comes back over AMQP 1.0 after the delay with its body and application properties as they were, the annotations and one delivery more', async () => {
    // Prepare
    const config = nativeConfig();
    await setUpTopology(broker(), config);
    const message: Message = {
      message_id: 'amqp10',
      subject: 'order',
      durable: true,
      application_properties: { tenant: 'acme', n: rhea.types.wrap_int(-7), big: rhea.types.wrap_ulong(2 ** 40), bin: Buffer.from([0xff, 0x00]) },
      body: rhea.message.data_section(BODY),
    };
    await sendAmqp10(config.workQueue, message);
    const { transport, tally, deadlines } = await open(config);
    const [taken] = await takeCount(transport, 1);
    expect(await transport.stopTaking()).toEqual([]);

    // Act
    const settledAt = Date.now();
    transport.settle(taken!, verdicts.retry(DELAY_MS));
    await transport.finish(deadlines);
    await transport.close();
    const { message: back, at } = await receiveAmqp10(config.workQueue);

    // Assess
    expect(tally.current).toMatchObject({ received: 1, retried: 1 });
    expect(at - settledAt).toBeGreaterThanOrEqual(DELAY_MS - CLOCK_SLACK_MS);
    expect(back.message_id).toBe('amqp10');
    expect(back.subject).toBe('order');
    expect(Buffer.from(back.body.content as Buffer).equals(BODY)).toBe(true);
    expect(back.application_properties).toEqual({ tenant: 'acme', n: -7, big: 2 ** 40, bin: Buffer.from([0xff, 0x00]) });
    expect(back.message_annotations).toMatchObject({ [NativeAnnotation.retryNo]: 1, [NativeAnnotation.failedSettlements]: 1 });
    expect(back.delivery_count).toBe(1);
  });

  it('stopTaking drains the credit and returns what arrived meanwhile, each released untouched; finish reads the parking lot depth', async () => {
    // Prepare
    const config = nativeConfig();
    await setUpTopology(broker(), config);
    for (const id of ['a', 'b', 'c']) publish(config, id);
    for (const id of ['lot-1', 'lot-2']) broker().channel.sendToQueue(config.parkingQueue, BODY, { messageId: id });
    const driven = await open(config);

    // Act
    const { arrived } = await takeThenStop(driven, broker(), config.workQueue, 1);
    const back = await awaitArrivals(config.workQueue, 2);

    // Assess
    expect(arrived.map((t) => t.delivery.properties.messageId)).toEqual(['b', 'c']);
    expect(driven.tally.current).toMatchObject({ received: 3, acked: 1, requeued: 2, parkedDepth: 2 });
    expect(back.map((a) => a.message.properties.messageId)).toEqual(['b', 'c']);
    for (const { message } of back) expect(message.properties.headers?.['x-delivery-count']).toBeUndefined();
  });

  itEndsWithItsQueueAndItsConnection({ broker, proxy, configOf: nativeConfig, publish, open });
});

describe.runIf(!NATIVE_BROKER)(`the native transport on RabbitMQ ${BROKER_VERSION}`, () => {
  it('refuses to open before it takes anything, naming the broker version', async () => {
    // Prepare
    const config = nativeConfig({ QUEUE_TYPE: 'quorum' });
    await broker().channel.assertQueue(config.workQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    broker().trackQueue(config.workQueue);
    publish(config, 'untouched');

    // Act
    const error = await open(config).then(
      () => undefined,
      (e: unknown) => e as Error,
    );

    // Assess
    expect(error?.name).toBe('UnsupportedBrokerError');
    expect(error?.message).toContain(BROKER_VERSION);
    await expect.poll(() => broker().messageCount(config.workQueue)).toBe(1);
  });
});

/** Sends `message` to `queue` over AMQP 1.0 and waits for the broker to accept it. */
async function sendAmqp10(queue: string, message: Message): Promise<void> {
  const amqp10 = await connectAmqp10({ urls: [AMQP_URL], connectTimeoutMs: 5000, connectionName: `${queue}-sender` });
  try {
    const sender = amqp10.connection.open_sender({ target: { address: `/queues/${encodeURIComponent(queue)}` } });
    await new Promise<void>((resolve, reject) => {
      sender.once('sendable', () => sender.send(message));
      sender.once('accepted', () => resolve());
      sender.once('rejected', () => reject(new Error(`${queue} rejected the message`)));
    });
  } finally {
    await amqp10.close();
  }
}

/** The next message of `queue` over AMQP 1.0 (accepted), and when it arrived. */
async function receiveAmqp10(queue: string, timeoutMs = 10_000): Promise<{ message: Message; at: number }> {
  const amqp10 = await connectAmqp10({ urls: [AMQP_URL], connectTimeoutMs: 5000, connectionName: `${queue}-receiver` });
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`nothing arrived in ${queue} within ${timeoutMs} ms`)), timeoutMs);
      const receiver = amqp10.connection.open_receiver({ source: { address: `/queues/${encodeURIComponent(queue)}` }, credit_window: 1 });
      receiver.once('message', (context: EventContext) => {
        clearTimeout(timer);
        resolve({ message: context.message as Message, at: Date.now() });
      });
    });
  } finally {
    await amqp10.close();
  }
}
