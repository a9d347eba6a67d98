/**
 * The pull transport's contract on the broker (issue 31): driven through the `Transport` interface
 * alone, each verdict is settled the way pull/pull.ts promises, and what the broker then does with
 * the message is read back from the broker. Runs on 3.10, 4.0 and 4.3.
 */
import { describe, expect, it } from 'vitest';
import type { Config } from '../../shared/config/config.js';
import { topologyOptionsFromConfig } from '../../shared/config/config.js';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { silentLogger } from '../helpers/fakes.js';
import { openPull } from '../../shared/pull/pull.js';
import { createDelayRouter } from '../../shared/topology/plan.js';
import { tierQueueName } from '../../shared/topology/tiers.js';
import { AMQP_URL, uniqueName } from '../helpers/broker.js';
import { GIVE_BACK_COUNTS } from '../helpers/broker-version.js';
import { BROKER_EARLY_PER_HOP_MS, CLOCK_SLACK_MS, setUpTopology, testConfig } from '../helpers/engine.js';
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
const HEADERS = { tenant: 'acme', traceparent: '00-abc-def-01', n: 7, big: 2 ** 40, ratio: 0.5, flag: true, nested: { a: 'b' }, list: [1, 'two'] };
const HEADER_NAMES = Object.keys(HEADERS);
const BODY = Buffer.from([0, 1, 2, 0xfe, 0xff, ...Buffer.from('{"order":42}')]);

function publish(config: Config, messageId: string): void {
  broker().channel.sendToQueue(config.workQueue, BODY, { persistent: true, messageId, contentType: 'application/octet-stream', headers: HEADERS });
}

function open(config: Config) {
  return openTransport(openPull({ config, handler: () => undefined, budgetMs: 10_000, log: silentLogger }));
}

describe('the pull transport on the broker', () => {
  it('acks an ack and a duplicate, gives a give-back back untouched, and rejects a park no copy can carry to the broker, which dead-letters it to the parking lot', async () => {
    // Prepare
    const config = testConfig();
    await setUpTopology(broker(), config);
    for (const id of ['ack', 'duplicate', 'uncopyable', 'give-back']) publish(config, id);
    const reference = await asPublished(broker(), BODY, { persistent: true, messageId: 'give-back', headers: HEADERS });
    const { transport, tally, deadlines } = await open(config);

    // Act
    const taken = await takeCount(transport, 4);
    expect(transport.settle(byId(taken, 'ack'), verdicts.ack)).toBeUndefined();
    expect(transport.settle(byId(taken, 'duplicate'), verdicts.duplicate)).toBeUndefined();
    await transport.settle(byId(taken, 'uncopyable'), verdicts.park(false));
    // A verdict for a message already settled settles nothing.
    expect(transport.settle(byId(taken, 'ack'), verdicts.giveBack)).toBeUndefined();
    expect(await transport.stopTaking()).toEqual([]);
    // Given back once the flow stopped, as the invocation does: else it would come straight back to this consumer.
    expect(transport.settle(byId(taken, 'give-back'), verdicts.giveBack)).toBeUndefined();
    await transport.finish(deadlines);
    await transport.close();
    const [givenBack, ...more] = await awaitArrivals(config.workQueue, 1);
    const [deadLettered] = await awaitArrivals(config.parkingQueue, 1);

    // Assess
    expect(tally.current).toMatchObject({ received: 4, acked: 1, skippedDuplicates: 1, requeued: 1, parked: 1, retried: 0, lost: 0 });
    expect(givenBack!.message.properties.messageId).toBe('give-back');
    expect(givenBack!.message.fields.redelivered).toBe(true);
    expect(givenBack!.message.content.equals(BODY)).toBe(true);
    expect(rawHex(givenBack!.raw, HEADER_NAMES)).toEqual(rawHex(reference.raw, HEADER_NAMES));
    // A quorum queue counts a requeueing nack as a delivery on 3.x and 4.0-4.2, not on 4.3.
    expect(givenBack!.message.properties.headers?.['x-delivery-count']).toBe(GIVE_BACK_COUNTS ? 1 : undefined);
    expect(deadLettered!.message.properties.messageId).toBe('uncopyable');
    expect(deadLettered!.message.content.equals(BODY)).toBe(true);
    expect(rawHex(deadLettered!.raw, HEADER_NAMES)).toEqual(rawHex(reference.raw, HEADER_NAMES));
    expect(deadLettered!.message.properties.headers).toMatchObject({ 'x-first-death-queue': config.workQueue, 'x-first-death-reason': 'rejected' });
    expect(deadLettered!.message.properties.headers?.[BoomerangHeader.parkReason]).toBeUndefined();
    expect(more).toEqual([]);
    expect(await broker().messageCount(config.workQueue)).toBe(0);
  });

  it('copies a retry and a deferral to the delay path, which hands them back after their TTL with body and headers byte for byte plus the count, and a park to the parking lot with the failure headers; each original is acked', async () => {
    // Prepare
    const config = testConfig({ FUNCTION_NAME: 'contract-pull' });
    await setUpTopology(broker(), config);
    for (const id of ['retry', 'defer', 'park']) publish(config, id);
    const reference = await asPublished(broker(), BODY, { persistent: true, messageId: 'retry', headers: HEADERS });
    const { transport, tally, deadlines } = await open(config);
    const taken = await takeCount(transport, 3);

    // Act
    const settledAt = Date.now();
    await Promise.all([
      transport.settle(byId(taken, 'retry'), verdicts.retry(200)),
      transport.settle(byId(taken, 'defer'), verdicts.defer(200, 1)),
      transport.settle(byId(taken, 'park'), verdicts.park()),
    ]);
    expect(await transport.stopTaking()).toEqual([]);
    await transport.finish(deadlines);
    await transport.close();
    const back = await awaitArrivals(config.workQueue, 2);
    const [parked] = await awaitArrivals(config.parkingQueue, 1);

    // Assess
    expect(tally.current).toMatchObject({ received: 3, retried: 1, deferred: 1, parked: 1, acked: 0, requeued: 0, parkedDepth: 1 });
    expect(back).toHaveLength(2);
    for (const [id, retryNo] of [
      ['retry', 1],
      ['defer', 1],
    ] as const) {
      const { message, raw, at } = arrivalOf(back, id);
      expect(at - settledAt, id).toBeGreaterThanOrEqual(200 - CLOCK_SLACK_MS - BROKER_EARLY_PER_HOP_MS);
      expect(message.properties.headers?.['x-first-death-queue'], id).toBe(tierQueueName(config.workQueue, 200));
      expect(message.content.equals(BODY), id).toBe(true);
      expect(rawHex(raw, HEADER_NAMES), id).toEqual(rawHex(reference.raw, HEADER_NAMES));
      expect(message.properties.headers?.[config.retryHeader], id).toBe(retryNo);
      expect(message.properties).toMatchObject({ messageId: id, contentType: 'application/octet-stream', deliveryMode: 2 });
    }
    // A failure writes its times; a deferral is no failure and keeps none.
    expect(arrivalOf(back, 'retry').message.properties.headers?.[BoomerangHeader.firstFailureAt]).toEqual(expect.any(String));
    expect(arrivalOf(back, 'defer').message.properties.headers?.[BoomerangHeader.firstFailureAt]).toBeUndefined();
    expect(parked!.message.content.equals(BODY)).toBe(true);
    expect(rawHex(parked!.raw, HEADER_NAMES)).toEqual(rawHex(reference.raw, HEADER_NAMES));
    expect(parked!.message.properties.headers).toMatchObject({
      [BoomerangHeader.errorName]: 'PartnerError',
      [BoomerangHeader.errorMessage]: 'partner down',
      [BoomerangHeader.parkReason]: 'retries exhausted: 2 of 2 made',
      [BoomerangHeader.attempts]: 3,
      [BoomerangHeader.sourceQueue]: config.workQueue,
      [BoomerangHeader.functionName]: 'contract-pull',
      [config.retryHeader]: 2,
    });
    expect(String(parked!.message.properties.headers?.[BoomerangHeader.errorStack])).toContain('at contract');
    expect(await broker().messageCount(config.workQueue)).toBe(0);
  });

  it('gives the original back when the broker returns its copy as unroutable, ends taking with publish-failed, and fails the invocation with the returned PublishError', async () => {
    // Prepare: the 200 ms delay queue is gone, so the default exchange routes the copy nowhere
    const config = testConfig();
    await setUpTopology(broker(), config);
    await broker().channel.deleteQueue(tierQueueName(config.workQueue, 200));
    for (const id of ['first', 'second']) publish(config, id);
    const { transport, tally, deadlines } = await open(config);
    const [first] = await takeCount(transport, 1);
    expect(transport.ended()).toBeUndefined();

    // Act
    await transport.settle(first!, verdicts.retry(200));
    const ended = transport.ended();
    const [second] = await takeCount(transport, 1);
    // The original given back may come straight back to this consumer: it is given back again after the stop.
    for (const taken of [second!, ...(await transport.stopTaking())]) transport.settle(taken, verdicts.giveBack);
    await transport.finish(deadlines);
    await transport.close();
    const error = transport.completed?.(tally.finish(Date.now()));
    const back = await awaitArrivals(config.workQueue, 2);

    // Assess
    expect(ended).toBe('publish-failed');
    expect(tally.current).toMatchObject({ retried: 0, requeued: tally.received });
    expect(transport.lost.aborted).toBe(false);
    expect(error?.name).toBe('TopologyDriftError');
    expect(error?.cause).toMatchObject({ name: 'PublishError', reason: 'returned' });
    expect(back.map((a) => a.message.properties.messageId).sort()).toEqual(['first', 'second']);
    expect(await broker().messageCount(config.workQueue)).toBe(0);
    expect(arrivalOf(back, 'first').message.properties.headers?.[config.retryHeader]).toBeUndefined();
  });

  it('loses the channel when a copy goes to an exchange that is gone: lost aborts with channel-closed, the invocation fails so, the original is back and close still works', async () => {
    // Prepare: exact mode publishes each copy to a level exchange; the one a 200 ms delay needs is deleted
    const config = testConfig({ DELAY_MODE: 'exact', EXACT_DELAY_PREFIX: uniqueName('exact') });
    await setUpTopology(broker(), config);
    const { exchange } = createDelayRouter(topologyOptionsFromConfig(config))(200);
    await broker().channel.deleteExchange(exchange);
    publish(config, 'orphan');
    const { transport, tally } = await open(config);
    const [taken] = await takeCount(transport, 1);

    // Act
    await transport.settle(taken!, verdicts.retry(200));
    const { reason, error } = await transport.failed(transport.lost.reason as Error);
    await transport.close();
    await transport.close();
    const [back] = await awaitArrivals(config.workQueue, 1);

    // Assess
    expect(transport.lost.aborted).toBe(true);
    expect(transport.lost.reason).toMatchObject({ name: 'BrokerConnectionError', reason: 'channel-closed' });
    expect((transport.lost.reason as Error).message).toContain('404');
    expect(reason).toBe('channel-closed');
    expect(error(tally.finish(Date.now())).name).toBe('PullAbortedError');
    expect(tally.current).toMatchObject({ retried: 0, requeued: 1 });
    expect(back!.message.properties.messageId).toBe('orphan');
    expect(back!.message.properties.headers?.[config.retryHeader]).toBeUndefined();
  });

  it('stopTaking cancels the consumer and returns what arrived meanwhile; finish gives back what is open and reads the parking lot depth', async () => {
    // Prepare
    const config = testConfig();
    await setUpTopology(broker(), config);
    for (const id of ['a', 'b', 'c', 'd']) publish(config, id);
    for (const id of ['lot-1', 'lot-2']) broker().channel.sendToQueue(config.parkingQueue, BODY, { messageId: id });
    const driven = await open(config);

    // Act
    const {
      arrived,
      open: [second],
    } = await takeThenStop(driven, broker(), config.workQueue, 2);
    const back = await awaitArrivals(config.workQueue, 3);

    // Assess
    expect(arrived.map((t) => t.delivery.properties.messageId)).toEqual(['c', 'd']);
    expect(driven.tally.current).toMatchObject({ received: 4, acked: 1, requeued: 3, parkedDepth: 2 });
    expect(back.map((a) => a.message.properties.messageId).sort()).toEqual([second!.delivery.properties.messageId, 'c', 'd'].sort());
  });

  itEndsWithItsQueueAndItsConnection({ broker, proxy, configOf: testConfig, publish, open, redeliveredAfterDrop: true });
});
