/**
 * The event transport's contract on the broker (issue 31): an `aws:rmq` batch built from real
 * deliveries (test/helpers/rmq-event-of.ts), driven through the `Transport` interface alone. Each
 * verdict is a publisher-confirmed copy (or nothing), read back from the broker; a copy the broker
 * does not confirm dooms the batch. Runs on 3.10, 4.0 and 4.3.
 */
import type { GetMessage } from 'amqplib';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../shared/config/config.js';
import { openEvent } from '../../shared/event/run-event.js';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { silentLogger } from '../helpers/fakes.js';
import { tierQueueName } from '../../shared/topology/tiers.js';
import { AMQP_URL } from '../helpers/broker.js';
import { BROKER_EARLY_PER_HOP_MS, CLOCK_SLACK_MS, setUpTopology, testConfig } from '../helpers/engine.js';
import { rmqEventOf } from '../helpers/rmq-event-of.js';
import { useProxyToBroker } from '../helpers/tcp-proxy.js';
import { useTestBroker } from '../helpers/topology.js';
import { arrivalOf, asPublished, awaitArrivals, byId, openTransport, rawHex, takeCount, verdicts } from '../helpers/transport-driver.js';

const broker = useTestBroker();
const proxy = useProxyToBroker(AMQP_URL);

/** The team's headers, of the types an event carries as they were (strings arrive as bytes and are decoded back). */
const HEADERS = { tenant: 'acme', traceparent: '00-abc-def-01', n: 7 };
const HEADER_NAMES = Object.keys(HEADERS);
const BODY = Buffer.from([0, 1, 2, 0xfe, 0xff, ...Buffer.from('{"order":42}')]);

/** Publishes one message per id to the work queue and takes them off it: the deliveries an event source mapping would read. */
async function deliveries(config: Config, ids: readonly string[]): Promise<GetMessage[]> {
  for (const messageId of ids) broker().channel.sendToQueue(config.workQueue, BODY, { persistent: true, messageId, headers: HEADERS });
  const taken = await broker().drain(config.workQueue, ids.length);
  expect(taken).toHaveLength(ids.length);
  return taken;
}

function open(config: Config, ids: readonly string[]) {
  return deliveries(config, ids).then((taken) =>
    openTransport(openEvent({ config, handler: () => undefined, budgetMs: 10_000, log: silentLogger, event: rmqEventOf(config.workQueue, taken) })),
  );
}

describe('the event transport on the broker', () => {
  it('takes the records in event order, then ends idle; settles each verdict once its copy is confirmed: retry and defer back from the delay path after their TTL, give-back at the tail at once, park in the parking lot', async () => {
    // Prepare
    const config = testConfig({ FUNCTION_NAME: 'contract-event' });
    await setUpTopology(broker(), config);
    const ids = ['ack', 'duplicate', 'retry', 'defer', 'park', 'give-back'];
    const { transport, tally, deadlines } = await open(config, ids);
    const reference = await asPublished(broker(), BODY, { messageId: 'reference', headers: HEADERS });

    // Act
    const taken = await takeCount(transport, ids.length, 0);
    const endedBeforeLastTake = transport.ended();
    const past = await transport.take(0);
    const settledAt = Date.now();
    await Promise.all([
      transport.settle(byId(taken, 'ack'), verdicts.ack),
      transport.settle(byId(taken, 'duplicate'), verdicts.duplicate),
      transport.settle(byId(taken, 'retry'), verdicts.retry(200)),
      transport.settle(byId(taken, 'defer'), verdicts.defer(200, 1)),
      transport.settle(byId(taken, 'park'), verdicts.park()),
      transport.settle(byId(taken, 'give-back'), verdicts.giveBack),
    ]);
    const again = transport.settle(byId(taken, 'ack'), verdicts.retry(200));
    const counted = { ...tally.current };
    expect(await transport.stopTaking()).toEqual([]);
    await transport.finish(deadlines);
    await transport.close();
    const back = await awaitArrivals(config.workQueue, 3);
    const [parked, ...moreParked] = await awaitArrivals(config.parkingQueue, 1);

    // Assess
    expect(taken.map((t) => t.delivery.properties.messageId)).toEqual(ids);
    expect(taken.every((t) => t.origin.queue === config.workQueue)).toBe(true);
    expect(endedBeforeLastTake).toBeUndefined();
    expect(past).toBeUndefined();
    expect(transport.ended()).toBe('idle');
    expect(transport.takeBuffered()).toEqual([]);
    expect(again).toBeUndefined();
    expect(counted).toMatchObject({ received: 6, acked: 1, skippedDuplicates: 1, retried: 1, deferred: 1, parked: 1, requeued: 1 });
    expect(tally.current.parkedDepth).toBe(1);
    expect(transport.lost.aborted).toBe(false);
    expect(back.map((a) => a.message.properties.messageId).sort()).toEqual(['defer', 'give-back', 'retry']);
    for (const [id, retryNo, delayed] of [
      ['retry', 1, true],
      ['defer', 1, true],
      ['give-back', undefined, false],
    ] as const) {
      const { message, raw, at } = arrivalOf(back, id);
      expect(message.content.equals(BODY), id).toBe(true);
      expect(rawHex(raw, HEADER_NAMES), id).toEqual(rawHex(reference.raw, HEADER_NAMES));
      expect(message.properties.headers?.[config.retryHeader], id).toBe(retryNo ?? 0);
      if (delayed) {
        expect(at - settledAt, id).toBeGreaterThanOrEqual(200 - CLOCK_SLACK_MS - BROKER_EARLY_PER_HOP_MS);
        expect(message.properties.headers?.['x-first-death-queue'], id).toBe(tierQueueName(config.workQueue, 200));
      } else {
        expect(message.properties.headers?.['x-first-death-queue'], id).toBeUndefined();
      }
    }
    expect(moreParked).toEqual([]);
    expect(parked!.message.content.equals(BODY)).toBe(true);
    expect(rawHex(parked!.raw, HEADER_NAMES)).toEqual(rawHex(reference.raw, HEADER_NAMES));
    expect(parked!.message.properties.headers).toMatchObject({
      [BoomerangHeader.parkReason]: 'retries exhausted: 2 of 2 made',
      [BoomerangHeader.errorName]: 'PartnerError',
      [BoomerangHeader.attempts]: 3,
      [BoomerangHeader.sourceQueue]: config.workQueue,
      [BoomerangHeader.functionName]: 'contract-event',
    });
  });

  it('dooms the batch at the first copy the broker does not confirm: lost aborts with the PublishError, nothing more is settled, and failed() gives EventBatchError with the reason', async () => {
    // Prepare: the 200 ms delay queue is gone, so the broker returns the retry copy as unroutable
    const config = testConfig();
    await setUpTopology(broker(), config);
    await broker().channel.deleteQueue(tierQueueName(config.workQueue, 200));
    const { transport, tally } = await open(config, ['retry', 'park']);
    const [retry, park] = await takeCount(transport, 2, 0);

    // Act
    await transport.settle(retry!, verdicts.retry(200));
    const after = transport.settle(park!, verdicts.park());
    const { reason, error } = await transport.failed(transport.lost.reason as Error);
    await transport.close();
    await transport.close();
    const thrown = error(tally.finish(Date.now()));

    // Assess
    expect(transport.lost.aborted).toBe(true);
    expect(transport.lost.reason).toMatchObject({ name: 'PublishError', reason: 'returned' });
    expect(after).toBeUndefined();
    expect(tally.current).toMatchObject({ received: 2, retried: 0, parked: 0 });
    expect(reason).toBe('publish-failed');
    expect(thrown.name).toBe('EventBatchError');
    expect(thrown.message).toContain('unroutable');
    expect(thrown.message).toContain('the whole batch of 2 again');
    expect(thrown.cause).toBe(transport.lost.reason);
    expect(await broker().messageCount(config.parkingQueue)).toBe(0);
  });

  it('dooms the batch when the connection drops: a copy after it settles nothing, and failed says connection-lost', async () => {
    // Prepare
    const config = testConfig({ AMQP_URL: proxy().url(AMQP_URL) });
    await setUpTopology(broker(), config);
    const { transport, tally } = await open(config, ['retry']);
    const [retry] = await takeCount(transport, 1, 0);

    // Act
    expect(proxy().cutAll()).toBeGreaterThan(0);
    await transport.settle(retry!, verdicts.retry(200));
    const { reason, error } = await transport.failed(transport.lost.reason as Error);
    await transport.close();

    // Assess
    expect(transport.lost.aborted).toBe(true);
    expect(reason).toBe('connection-lost');
    expect(error(tally.finish(Date.now())).name).toBe('EventBatchError');
    expect(tally.current).toMatchObject({ received: 1, retried: 0 });
  });
});
