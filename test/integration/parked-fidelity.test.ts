/**
 * Reading a parking lot leaves every message as it was, byte for byte, in its order: messages put
 * there by another client, with every AMQP header type (issue 21, point 2), and one whose headers
 * are over amqplib's 64 KiB encoding buffer (point 3), which must not block the rest.
 */
import { describe, expect, it } from 'vitest';
import { readMessageDetail, readMessageList } from '../../shared/console/parked-reads.js';
import type { CommandContext } from '../../shared/parked/context.js';
import { EVERYTHING } from '../../shared/parked/filters.js';
import { groupParked } from '../../shared/parked/groups.js';
import { listParked } from '../../shared/parked/list.js';
import { purgeParked } from '../../shared/parked/purge.js';
import { replayParked } from '../../shared/parked/replay.js';
import { showParked } from '../../shared/parked/show.js';
import { uniqueName } from '../helpers/broker.js';
import { READ_COUNT_HEADER } from '../helpers/broker-version.js';
import { RecordingProgress } from '../helpers/fakes.js';
import { BIG, BODY, published, readRaw, ZOO } from '../helpers/header-zoo.js';
import { rawPublish, sized, type RawHeader } from '../helpers/raw-publish.js';
import { useTestBroker } from '../helpers/topology.js';

/** Headers the broker sets on a delivery: they may appear, counting reads, and are not the message's. */
const BROKER_COUNTS = new Set(['x-delivery-count', 'x-acquired-count']);

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

/** The raw entries a delivery carries, less the broker's read counts. */
function ownHeaders(raw: ReadonlyMap<string, Buffer>): Map<string, string> {
  return new Map([...raw].filter(([name]) => !BROKER_COUNTS.has(name)).map(([name, value]) => [name, value.toString('hex')]));
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
    const detail = await run(lot, (ctx) => readMessageDetail(ctx, { messageId: 'zoo' }, 'x-retry-no'));
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
      const counted = type === 'classic' ? [] : [READ_COUNT_HEADER];
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
    for (const [messageId, headers] of [
      ['a', plain],
      ['big', BIG],
      ['b', plain],
    ] as const)
      await rawPublish({ queue: lot, messageId, headers, body: Buffer.from(messageId) });

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
