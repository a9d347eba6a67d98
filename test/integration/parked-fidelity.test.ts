/**
 * Reading a parking lot leaves every message as it was, byte for byte, in its order: messages put
 * there by another client, with every AMQP header type (issue 21, point 2), and one whose headers
 * are over amqplib's 64 KiB encoding buffer (point 3), which must not block the rest.
 */
import amqp, { type GetMessage } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { readMessageDetail, readMessageList } from '../../shared/console/parked-reads.js';
import type { CommandContext } from '../../shared/parked/context.js';
import { EVERYTHING } from '../../shared/parked/filters.js';
import { groupParked } from '../../shared/parked/groups.js';
import { listParked } from '../../shared/parked/list.js';
import { purgeParked } from '../../shared/parked/purge.js';
import { replayParked } from '../../shared/parked/replay.js';
import { showParked } from '../../shared/parked/show.js';
import { brokerMajor } from '../../shared/topology/delivery-limit.js';
import { AMQP_URL, uniqueName } from '../helpers/broker.js';
import { BROKER_VERSION } from '../helpers/broker-version.js';
import { RecordingProgress } from '../helpers/fakes.js';
import { tapRawHeaders } from '../helpers/raw-headers.js';
import { rawPublish, rawTable, sized, type RawHeader } from '../helpers/raw-publish.js';
import { useTestBroker } from '../helpers/topology.js';

function bytes(...values: number[]): Buffer {
  return Buffer.from(values);
}

function int(size: 1 | 2 | 4 | 8, value: number | bigint, signed = true): Buffer {
  const b = Buffer.alloc(size);
  if (size === 8) b.writeBigInt64BE(BigInt(value));
  else if (signed) b.writeIntBE(Number(value), 0, size);
  else b.writeUIntBE(Number(value), 0, size);
  return b;
}

/** An IEEE 754 value of 4 (`float`) or 8 (`double`) bytes. */
function ieee(size: 4 | 8, value: number): Buffer {
  const b = Buffer.alloc(size);
  if (size === 4) b.writeFloatBE(value);
  else b.writeDoubleBE(value);
  return b;
}

/** Every type RabbitMQ's field tables carry, with values amqplib would encode otherwise (or cannot decode exactly). */
const ZOO: readonly RawHeader[] = [
  ['int8', 'b', int(1, 5)],
  ['uint8', 'B', int(1, 200, false)],
  ['int16', 's', int(2, 5)],
  ['uint16', 'u', int(2, 5, false)],
  ['int32', 'I', int(4, 5)],
  ['uint32', 'i', int(4, 5, false)],
  ['int64', 'l', int(8, 2n ** 62n + 1n)],
  ['float', 'f', ieee(4, 1.5)],
  ['double', 'd', ieee(8, 0.1)],
  ['decimal', 'D', bytes(2, 0, 0, 4, 210)],
  ['timestamp', 'T', int(8, 1_795_334_400n)],
  ['bool', 't', bytes(1)],
  ['void', 'V', Buffer.alloc(0)],
  ['bytes', 'x', sized(bytes(0, 255, 128))],
  ['latin1', 'S', sized(bytes(0x63, 0x61, 0x66, 0xe9))],
  ['nested', 'F', sized(rawTable([['n', 'I', int(4, 7)], ['f', 'f', ieee(4, 2.5)]]))],
  ['list', 'A', sized(Buffer.concat([Buffer.from('s'), int(2, 3), Buffer.from('l'), int(8, 2n ** 60n)]))],
  ['boomerang-error-name', 'S', sized(Buffer.from('PartnerDown'))],
];

/** Headers over amqplib's 65 536-byte encoding buffer (RabbitMQ takes up to its frame size, 128 KiB). */
const BIG: readonly RawHeader[] = [
  ['boomerang-error-name', 'S', sized(Buffer.from('TooBig'))],
  ['padding', 'S', sized(Buffer.alloc(70_000, 'p'))],
];

/** Headers the broker sets on a delivery: they may appear, counting reads, and are not the message's. */
const BROKER_COUNTS = new Set(['x-delivery-count', 'x-acquired-count']);

const BODY = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

const broker = useTestBroker();

/** Runs a command the way the CLI does: its own confirm channel, closed afterwards. */
async function run<T>(queue: string, command: (ctx: CommandContext) => Promise<T>): Promise<T> {
  const channel = await broker().connection.createConfirmChannel();
  try {
    return await command({ channel, queue, publishTimeoutMs: 10_000, progress: () => new RecordingProgress() });
  } finally {
    await channel.close();
  }
}

/** Every message of `queue`, in order, each with its raw header bytes, given back afterwards. */
async function readRaw(queue: string): Promise<{ message: GetMessage; raw: ReadonlyMap<string, Buffer> }[]> {
  const connection = await amqp.connect(AMQP_URL, { noDelay: true });
  try {
    const tap = tapRawHeaders(connection);
    const channel = await connection.createChannel();
    const out: { message: GetMessage; raw: ReadonlyMap<string, Buffer> }[] = [];
    for (;;) {
      const message = await channel.get(queue, { noAck: true });
      if (message === false) break;
      out.push({ message, raw: tap.last() });
    }
    return out;
  } finally {
    await connection.close();
  }
}

/** The raw entries a delivery carries, less the broker's read counts. */
function ownHeaders(raw: ReadonlyMap<string, Buffer>): Map<string, string> {
  return new Map([...raw].filter(([name]) => !BROKER_COUNTS.has(name)).map(([name, value]) => [name, value.toString('hex')]));
}

function published(headers: readonly RawHeader[]): Map<string, string> {
  return new Map(headers.map(([name, tag, value]) => [name, Buffer.concat([Buffer.from(tag, 'latin1'), value]).toString('hex')]));
}

describe.each(['quorum', 'classic'] as const)('a %s parking lot read by every command', (type) => {
  it('keeps every message byte for byte, every header type included, in its order, and a message with headers over 64 KiB does not block the others', async () => {
    // Prepare: messages from another client around the odd ones
    const lot = uniqueName('fidelity.parked');
    broker().trackQueue(lot);
    await broker().channel.assertQueue(lot, { durable: true, arguments: { 'x-queue-type': type } });
    const plain: RawHeader[] = [['boomerang-error-name', 'S', sized(Buffer.from('PartnerDown'))]];
    const sent = [
      { messageId: 'plain-0', headers: plain, body: Buffer.from('{"orderId":0}') },
      { messageId: 'zoo', headers: ZOO, body: BODY },
      { messageId: 'big', headers: BIG, body: Buffer.from('big headers') },
      { messageId: 'plain-1', headers: plain, body: Buffer.from('{"orderId":12345678901234567890,"amount":10.50}') },
    ];
    for (const message of sent) await rawPublish({ queue: lot, ...message });

    // Act: every read the CLI and the console make
    const listed = await run(lot, (ctx) => listParked(ctx, { filter: EVERYTHING, json: true }));
    const grouped = await run(lot, (ctx) => groupParked(ctx, EVERYTHING));
    const shown = await run(lot, (ctx) => showParked(ctx, { messageId: 'zoo', json: true }));
    const shownBig = await run(lot, (ctx) => showParked(ctx, { messageId: 'big', json: true }));
    const consoleList = await run(lot, (ctx) => readMessageList(ctx, EVERYTHING, 10));
    const detail = await run(lot, (ctx) => readMessageDetail(ctx, 'zoo', 'x-retry-no'));
    const dryRun = await run(lot, (ctx) => replayParked(ctx, { filter: EVERYTHING, to: lot, keepCount: false, dryRun: true, retryHeader: 'x-retry-no' }));

    // Assess
    expect(listed).toMatchObject({ total: 4, visited: 4, kept: 4, matched: 4, ending: 'done' });
    expect(grouped.groups.reduce((sum, g) => sum + g.count, 0)).toBe(4);
    expect(shown.found).toBe(1);
    expect(shownBig.found).toBe(1);
    expect(consoleList.messages.map((m) => m.messageId)).toEqual(['plain-0', 'zoo', 'big', 'plain-1']);
    expect(detail.message).not.toBeNull();
    expect(dryRun.selected).toBe(4);
    const after = await readRaw(lot);
    expect(after.map(({ message }) => message.properties.messageId)).toEqual(sent.map((m) => m.messageId));
    for (const [i, { message, raw }] of after.entries()) {
      expect(message.content.equals(sent[i]!.body), `body of ${sent[i]!.messageId}`).toBe(true);
      expect(ownHeaders(raw), `headers of ${sent[i]!.messageId}`).toEqual(published(sent[i]!.headers));
      // 7 walks, each a read: the broker counts them on quorum queues (on 4.3 as acquisitions, not failures).
      const counted = type === 'classic' ? [] : brokerMajor(BROKER_VERSION)! >= 4 ? ['x-acquired-count'] : ['x-delivery-count'];
      expect([...raw.keys()].filter((name) => BROKER_COUNTS.has(name))).toEqual(counted);
      if (counted.length > 0) expect(message.properties.headers?.[counted[0]!]).toBe(7);
    }
  }, 60_000);

  it('replays around a message whose headers amqplib cannot send, reports it by id with why, keeps it parked, and purges it', async () => {
    // Prepare
    const lot = uniqueName('fidelity.parked');
    const work = uniqueName('fidelity.work');
    broker().trackQueue(lot, work);
    for (const queue of [lot, work]) await broker().channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': type } });
    const plain: RawHeader[] = [['boomerang-error-name', 'S', sized(Buffer.from('PartnerDown'))]];
    for (const [messageId, headers] of [['a', plain], ['big', BIG], ['b', plain]] as const) await rawPublish({ queue: lot, messageId, headers, body: Buffer.from(messageId) });

    // Act
    const replayed = await run(lot, (ctx) => replayParked(ctx, { filter: EVERYTHING, to: work, keepCount: false, dryRun: false, retryHeader: 'x-retry-no' }));
    const left = await readRaw(lot);
    for (const { raw } of left) expect(raw.size).toBeGreaterThan(0);
    await rawPublish({ queue: lot, messageId: 'big', headers: BIG, body: Buffer.from('big') });
    const purged = await run(lot, (ctx) => purgeParked(ctx, { filter: { ...EVERYTHING, messageId: 'big' }, dryRun: false }));

    // Assess
    expect(replayed).toMatchObject({ selected: 3, moved: 2, notMoved: 1, kept: 1 });
    expect(replayed.unsendable).toEqual([{ messageId: 'big', reason: expect.stringMatching(/65536 byte encoding buffer/) }]);
    expect([...replayed.byQueue]).toEqual([[work, 2]]);
    expect(left.map(({ message }) => message.properties.messageId)).toEqual(['big']);
    expect((await readRaw(work)).map(({ message }) => message.content.toString())).toEqual(['a', 'b']);
    expect(purged).toMatchObject({ selected: 1, deleted: 1 });
    expect(await broker().messageCount(lot)).toBe(0);
  }, 60_000);
});
