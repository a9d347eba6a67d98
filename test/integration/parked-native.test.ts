import { NATIVE_BROKER } from '../helpers/broker-version.js';
import amqp, { type GetMessage } from 'amqplib';
import rhea, { type EventContext } from 'rhea';
import { describe, expect, it } from 'vitest';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { EVERYTHING } from '../../shared/parked/filters.js';
import { groupParked } from '../../shared/parked/groups.js';
import { listParked } from '../../shared/parked/list.js';
import { replayParked } from '../../shared/parked/replay.js';
import { showParked } from '../../shared/parked/show.js';
import { AMQP_URL, uniqueName, type TestBroker } from '../helpers/broker.js';
import { NATIVE_DEATH, nativeParkHeaders, TEAM_HEADERS as TEAM_PARK_HEADERS } from '../helpers/native-park.js';
import { runParkedCommand } from '../helpers/parked-command.js';
import { tapRawHeaders } from '../helpers/raw-headers.js';
import { useTestBroker } from '../helpers/topology.js';

// Native parks need RabbitMQ 4.3 (AMQP 1.0 `modified` with annotations); CI also runs 3.10, where the unit tests cover the reading.
const nativeBroker = NATIVE_BROKER;

const broker = useTestBroker();

/**
 * The team's headers, one of each type a 0-9-1 table holds (no `decimal`: 4.3.6 crashes the AMQP 1.0
 * session converting it, measured). Each number in the type amqplib would pick for it anyway, except
 * the int64 above 2^53 and the float (see `REENCODED`). The bytes are not UTF-8: amqplib can
 * publish such bytes only as a byte array, never as a long string.
 */
const TEAM_HEADERS = {
  tenant: 'acme',
  int8: { '!': 'int8', value: -7 },
  int16: { '!': 'int16', value: -300 },
  int32: { '!': 'int32', value: 70_000 },
  int64: { '!': 'int64', value: 2n ** 60n + 1n },
  float: { '!': 'float', value: 1.5 },
  double: 2.25,
  timestamp: { '!': 'timestamp', value: 1_795_334_400 },
  bytes: Buffer.from([0x00, 0xc3, 0x28, 0xfe, 0xff]),
  flag: true,
  nested: { level: { deeper: 'yes', n: 300 }, list: [1, 'two', false] },
  array: ['x', 2, { a: 'b' }],
  'x-team-trace': 't-1',
};

/**
 * The two headers the tools cannot carry as they were: they read with amqplib, which decodes a
 * table into JS values, so its re-encoding makes a float a double (same value) and rounds an int64
 * beyond 2^53 (docs/operations.md). The broker's park itself keeps both (measured on 4.3.6).
 */
const REENCODED: Readonly<Record<string, string>> = {
  float: '643ff8000000000000', // 'd', the double 1.5
  int64: '6c1000000000000000', // 'l', 2^60: the nearest double to 2^60 + 1
};

/** What no replayed message carries: the native bookkeeping and the broker's headers. */
const GONE = /^(x-opt-boomerang-|x-opt-delivery-time$|x-death$|x-(first|last)-death-|x-delivery-count$|x-acquired-count$)/;

/** A quorum work queue that parks by dead-lettering to its parking lot, as native mode declares it. */
async function nativeQueues(b: TestBroker): Promise<{ work: string; lot: string }> {
  const work = uniqueName('native');
  const lot = `${work}.parked`;
  b.trackQueue(work, lot);
  await b.channel.assertQueue(lot, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await b.channel.assertQueue(work, {
    durable: true,
    arguments: {
      'x-queue-type': 'quorum',
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': lot,
      'x-dead-letter-strategy': 'at-least-once',
      'x-overflow': 'reject-publish',
      'x-delayed-retry-type': 'failed',
    },
  });
  return { work, lot };
}

/** Publishes the message on a confirm channel (so it is in the queue when this returns). */
async function publish(b: TestBroker, queue: string): Promise<void> {
  const channel = await b.connection.createConfirmChannel();
  channel.sendToQueue(queue, Buffer.from('{"orderId":42}'), {
    messageId: 'order-42',
    contentType: 'application/json',
    correlationId: 'c-42',
    persistent: true,
    headers: TEAM_HEADERS,
  });
  await channel.waitForConfirms();
  await channel.close();
}

/**
 * Consumes the work queue over AMQP 1.0 and settles the message as native mode does: one retry (200 ms),
 * then the park; returns once the message is in the parking lot `lot`.
 */
async function retryThenPark(b: TestBroker, work: string, lot: string): Promise<void> {
  const url = new URL(AMQP_URL);
  const connection = rhea
    .create_container()
    .connect({ host: url.hostname, port: Number(url.port || 5672), username: 'guest', password: 'guest', hostname: 'vhost:/', reconnect: false });
  try {
    await new Promise<void>((resolve, reject) => {
      let deliveries = 0;
      const receiver = connection.open_receiver({ source: { address: `/queues/${work}` }, autoaccept: false, credit_window: 1 });
      receiver.on('message', (context: EventContext) => {
        deliveries++;
        const delivery = context.delivery;
        if (delivery === undefined) return reject(new Error('a message without its delivery'));
        const error = { 'x-opt-boomerang-error-name': 'PartnerDown', 'x-opt-boomerang-error-message': `HTTP 503 (attempt ${deliveries})` };
        if (deliveries === 1) {
          delivery.modified({
            delivery_failed: true,
            undeliverable_here: false,
            message_annotations: {
              'x-opt-delivery-time': Date.now() + 200,
              'x-opt-boomerang-retry-no': 1,
              'x-opt-boomerang-failed-settlements': 1,
              'x-opt-boomerang-first-failure-at': new Date().toISOString(),
              ...error,
            },
          });
          return undefined;
        }
        delivery.modified({
          delivery_failed: true,
          undeliverable_here: true,
          message_annotations: {
            ...error,
            'x-opt-boomerang-park-reason': 'retries exhausted: 1 of 1 made',
            'x-opt-boomerang-attempts': 2,
            'x-opt-boomerang-parked-at': new Date().toISOString(),
            'x-opt-boomerang-function': 'orders-retry',
            'x-opt-boomerang-error-stack': 'PartnerDown: HTTP 503',
          },
        });
        resolve();
        return undefined;
      });
      connection.on('connection_error', () => reject(new Error('the AMQP 1.0 connection failed')));
      connection.on('disconnected', () => reject(new Error('the AMQP 1.0 connection dropped')));
    });
    // The dispositions go out on the next tick: close only once the broker has them (the message is parked).
    await b.holds(lot, 1);
  } finally {
    connection.close();
  }
}

/** The message on `queue`, taken on a tapped connection: amqplib's decoded view and each header's raw bytes. */
async function takeRaw(queue: string): Promise<{ message: GetMessage; raw: ReadonlyMap<string, Buffer> }> {
  const connection = await amqp.connect(AMQP_URL);
  try {
    const tap = tapRawHeaders(connection);
    const channel = await connection.createChannel();
    const message = await channel.get(queue, { noAck: true });
    if (message === false) throw new Error(`${queue} is empty`);
    return { message, raw: tap.last() };
  } finally {
    await connection.close();
  }
}

describe.runIf(nativeBroker)('a message parked natively (RabbitMQ 4.3: modified, undeliverable here)', () => {
  it('is listed, shown and grouped with the error, reason and attempts of its annotations and the source queue of its x-death, and replayed as it was published', async () => {
    // Prepare: the reference is the same message published to a plain queue, read back raw
    const b = broker();
    const reference = uniqueName('reference');
    b.trackQueue(reference);
    await b.channel.assertQueue(reference, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    await publish(b, reference);
    const original = await takeRaw(reference);
    const { work, lot } = await nativeQueues(b);
    await publish(b, work);
    await retryThenPark(b, work, lot);
    // Act
    const listed = await runParkedCommand(b, lot, (ctx) => listParked(ctx, { filter: { errorNames: ['PartnerDown'], headers: [] }, json: true }));
    const shown = await runParkedCommand(b, lot, (ctx) => showParked(ctx, { messageId: 'order-42', json: true }));
    const grouped = await runParkedCommand(b, lot, (ctx) => groupParked(ctx));
    const replayed = await runParkedCommand(b, lot, (ctx) =>
      replayParked(ctx, { filter: EVERYTHING, keepCount: false, dryRun: false, retryHeader: 'x-retry-no' }),
    );
    // Assess: what the tools read
    expect(JSON.parse(listed.printed[0] as string)).toMatchObject({
      messageId: 'order-42',
      errorName: 'PartnerDown',
      errorMessage: 'HTTP 503 (attempt 2)',
      parkReason: 'retries exhausted: 1 of 1 made',
      attempts: 2,
      sourceQueue: work,
    });
    const entry = JSON.parse(shown.printed[0] as string) as { parked: Record<string, unknown> };
    expect(entry.parked).toMatchObject({ error: 'PartnerDown', reason: 'retries exhausted: 1 of 1 made', sourceQueue: work, attempts: 2 });
    expect(grouped.result.groups).toEqual([
      expect.objectContaining({ errorName: 'PartnerDown', message: 'HTTP <n> (attempt <n>)', sourceQueue: work, count: 1 }),
    ]);
    expect([...replayed.result.byQueue]).toEqual([[work, 1]]);
    // Assess: the replayed message, as published
    const back = await takeRaw(work);
    expect(back.message.content.toString()).toBe('{"orderId":42}');
    expect(back.message.properties).toMatchObject({ messageId: 'order-42', contentType: 'application/json', correlationId: 'c-42', deliveryMode: 2 });
    // Nothing added: a replay publishes one message at a time, with no copy id.
    expect(back.message.properties.headers?.[BoomerangHeader.copyId]).toBeUndefined();
    expect(back.message.properties.headers).toEqual(original.message.properties.headers);
    expect(Object.keys(back.message.properties.headers ?? {}).filter((name) => GONE.test(name))).toEqual([]);
    expect(back.message.properties.headers?.bytes).toEqual(TEAM_HEADERS.bytes);
    for (const [name, bytes] of original.raw)
      expect(back.raw.get(name)?.toString('hex'), `header ${name}: type tag and value`).toBe(REENCODED[name] ?? bytes.toString('hex'));
    expect(await b.messageCount(lot)).toBe(0);
  });
});

describe('a native park as a parking lot holds it, published by a 0-9-1 client (every broker version)', () => {
  it('is read from its x-opt-boomerang-* headers and x-death, and replayed to the x-death queue without them', async () => {
    // Prepare: the park of a native work queue, its broker headers written by hand (3.10 has no native mode)
    const b = broker();
    const work = uniqueName('work');
    const lot = `${work}.parked`;
    b.trackQueue(work, lot);
    for (const queue of [work, lot]) await b.channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    const death = { ...NATIVE_DEATH['x-death'][0], queue: work, 'routing-keys': [work] };
    const headers = { ...nativeParkHeaders(), 'x-death': [death], 'x-first-death-queue': work, 'x-last-death-queue': work };
    b.channel.sendToQueue(lot, Buffer.from('{"orderId":7}'), { messageId: 'order-7', persistent: true, headers });
    await b.holds(lot, 1);
    // Act
    const listed = await runParkedCommand(b, lot, (ctx) => listParked(ctx, { filter: { errorNames: ['PartnerDown'], headers: [] }, json: true }));
    const grouped = await runParkedCommand(b, lot, (ctx) => groupParked(ctx));
    const replayed = await runParkedCommand(b, lot, (ctx) =>
      replayParked(ctx, { filter: EVERYTHING, keepCount: false, dryRun: false, retryHeader: 'x-retry-no' }),
    );
    // Assess
    expect(JSON.parse(listed.printed[0] as string)).toMatchObject({
      errorName: 'PartnerDown',
      parkReason: 'retries exhausted: 2 of 2 made',
      attempts: 3,
      parkedAt: '2026-11-22T09:00:00.000Z',
      sourceQueue: work,
    });
    expect(grouped.result.groups).toEqual([expect.objectContaining({ errorName: 'PartnerDown', sourceQueue: work, count: 1 })]);
    expect([...replayed.result.byQueue]).toEqual([[work, 1]]);
    const [back] = await b.drain(work, 1);
    // 3.10's quorum queue hands out a message with x-delivery-count 0: the broker's, set on this delivery.
    const { [BoomerangHeader.copyId]: _copyId, 'x-delivery-count': _count, ...backHeaders } = back?.properties.headers ?? {};
    expect(backHeaders).toEqual(TEAM_PARK_HEADERS);
  });
});
