import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { resumableReplay } from '../../shared/parked/replay.js';
import { withParkingLot } from '../../shared/parked/session.js';
import { EVERYTHING } from '../../shared/parked/filters.js';
import { AMQP_URL, TestBroker, uniqueName } from '../helpers/broker.js';
import { useProxyToBroker } from '../helpers/tcp-proxy.js';
import { testConfig } from '../helpers/engine.js';

const PARKED = 300;

describe('parked replay through a lost connection (amqp-connection-manager)', () => {
  let broker: TestBroker;
  // The tool reaches the broker through a proxy that drops its connection on cue, at once: a cut by
  // rabbitmqctl (a VM start, seconds) had to be outpaced by replaying at 15 a second, 20 s a run.
  const proxy = useProxyToBroker(AMQP_URL);

  beforeEach(async () => {
    broker = await TestBroker.open();
  });

  afterEach(async () => {
    await broker.close();
  });

  it('reconnects and carries on: every parked message ends up replayed, none lost (duplicates counted)', async () => {
    // Prepare: PARKED parked copies whose source queue is `source`
    const source = uniqueName('reconnect-work');
    const parked = `${source}.parked`;
    broker.trackQueue(source, parked);
    for (const queue of [source, parked]) await broker.channel.assertQueue(queue, { durable: true });
    for (let i = 0; i < PARKED; i++) {
      broker.channel.sendToQueue(parked, Buffer.from(`{"n":${i}}`), {
        persistent: true,
        messageId: `m-${i}`,
        headers: { [BoomerangHeader.sourceQueue]: source },
      });
    }
    await broker.holds(parked, PARKED);
    const config = testConfig({ AMQP_URL: proxy().url(AMQP_URL), PARKING_QUEUE: parked });
    // 100 a second: 3 s in all; the cut comes within a poll of the first quarter being back.
    const replaying = resumableReplay({
      filter: EVERYTHING,
      workQueue: source,
      keepCount: false,
      dryRun: false,
      retryHeader: config.retryHeader,
      ratePerSecond: 100,
    });

    // Act: cut the tool's connection once a quarter of the lot is back
    const done = withParkingLot(config, parked, replaying, { resume: true });
    await broker.holds(source, PARKED / 4);
    const closed = proxy().cutAll();
    const result = await done;

    // Assess
    expect(closed).toBe(1);
    // The walk that finished started after the cut, on what the cut one left parked.
    expect(result.total).toBeLessThan(PARKED);
    const back = await broker.drain(source, PARKED, 10_000);
    // A duplicate comes on top of the PARKED: take whatever else is there.
    for (let extra = await broker.channel.get(source, { noAck: true }); extra !== false; extra = await broker.channel.get(source, { noAck: true }))
      back.push(extra);
    const ids = back.map((m) => String(m.properties.messageId));
    const duplicates = ids.length - new Set(ids).size;
    console.log(
      `[reconnect] replayed ${ids.length} copies of ${PARKED} parked messages (${duplicates} duplicates); result.selected ${result.selected}, last walk ${JSON.stringify({ total: result.total, moved: result.moved })}`,
    );
    expect(new Set(ids).size).toBe(PARKED);
    expect(duplicates).toBeLessThanOrEqual(1);
    expect(await broker.messageCount(parked)).toBe(0);
  });
});
