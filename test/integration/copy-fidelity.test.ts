/**
 * What a copy of the 0-9-1 path (a retry copy, a parked copy, a replay) does to a header table a
 * producer other than amqplib wrote: exactly the changes docs/guarantees.md lists ("What a copy
 * changes"), per header and byte for byte, and nothing else (issue 21, point 4).
 */
import { expect, it } from 'vitest';
import { EVERYTHING } from '../../shared/parked/filters.js';
import { replayParked } from '../../shared/parked/replay.js';
import { tierQueueName } from '../../shared/topology/tiers.js';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { uniqueName } from '../helpers/broker.js';
import { pullOnce, setUpTopology, testConfig } from '../helpers/engine.js';
import { RecordingProgress } from '../helpers/fakes.js';
import { BODY, ieee, int, published, readRaw, ZOO } from '../helpers/header-zoo.js';
import { rawPublish, rawTable, sized } from '../helpers/raw-publish.js';
import { useTestBroker } from '../helpers/topology.js';

const broker = useTestBroker();

/**
 * The zoo's headers after amqplib decoded and encoded them again: an integer becomes the smallest
 * signed type that holds it, a float a double, an int64 beyond 2^53 the nearest double's integer,
 * a long string that is not UTF-8 has U+FFFD for each bad byte; the rest is kept byte for byte.
 */
const RE_ENCODED = new Map([
  // The error name is Boomerang's own field, which a park writes and a replay removes.
  ...[...published(ZOO)].filter(([name]) => name !== BoomerangHeader.errorName),
  ...published([
    ['uint8', 's', int(2, 200)],
    ['int16', 'b', int(1, 5)],
    ['uint16', 'b', int(1, 5)],
    ['int32', 'b', int(1, 5)],
    ['uint32', 'b', int(1, 5)],
    ['int64', 'l', int(8, 2n ** 62n)],
    ['float', 'd', ieee(8, 1.5)],
    ['whole-double', 'b', int(1, 2)],
    ['latin1', 'S', sized(Buffer.from('caf\uFFFD'))],
    [
      'nested',
      'F',
      sized(
        rawTable([
          ['n', 'b', int(1, 7)],
          ['f', 'd', ieee(8, 2.5)],
        ]),
      ),
    ],
    ['list', 'A', sized(Buffer.concat([Buffer.from('b'), int(1, 3), Buffer.from('l'), int(8, 2n ** 60n)]))],
  ]),
]);

/** The zoo's own headers as a copy carries them (the ones Boomerang adds set aside). */
function zooPart(raw: ReadonlyMap<string, Buffer>): Map<string, string> {
  return new Map([...raw].filter(([name]) => RE_ENCODED.has(name)).map(([name, value]) => [name, value.toString('hex')]));
}

it('a retry copy, a parked copy and a replay change exactly the header types the docs list, and keep the body byte for byte', async () => {
  // Prepare: a long first delay, so the retry copy waits in its delay queue to be read
  const retrying = testConfig({ BACKOFF_INITIAL_MS: '60000', BACKOFF_MAX_MS: '60000' });
  const parking = testConfig({ MAX_RETRIES: '0' });
  for (const config of [retrying, parking]) await setUpTopology(broker(), config);
  for (const config of [retrying, parking]) await rawPublish({ queue: config.workQueue, messageId: 'zoo', headers: ZOO, body: BODY });
  const fail = (): Promise<void> => Promise.reject(new Error('partner down'));

  // Act
  await pullOnce(retrying, fail);
  await pullOnce(parking, fail);
  const [retryCopy] = await readRaw(tierQueueName(retrying.workQueue, 60_000));
  const parked = uniqueName('copy-fidelity.lot');
  broker().trackQueue(parked);
  await broker().channel.assertQueue(parked, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await rawPublish({
    queue: parked,
    messageId: 'zoo',
    headers: [...ZOO, [BoomerangHeader.sourceQueue, 'S', sized(Buffer.from(parking.workQueue))]],
    body: BODY,
  });
  const [parkedCopy] = await readRaw(parking.parkingQueue);
  const channel = await broker().connection.createConfirmChannel();
  await replayParked(
    { channel, queue: parked, publishTimeoutMs: 10_000, progress: () => new RecordingProgress() },
    { filter: EVERYTHING, workQueue: parking.workQueue, keepCount: false, dryRun: false, retryHeader: parking.retryHeader },
  );
  await channel.close();
  const [replayed] = await readRaw(parking.workQueue);

  // Assess
  for (const [what, copy] of [
    ['retry copy', retryCopy],
    ['parked copy', parkedCopy],
    ['replay', replayed],
  ] as const) {
    expect(copy, what).toBeDefined();
    expect(copy!.message.content.equals(BODY), `${what}: body`).toBe(true);
    expect(zooPart(copy!.raw), `${what}: headers`).toEqual(RE_ENCODED);
  }
  // A replay adds nothing: no copy id (one publish at a time needs none to pair a basic.return).
  const added = [...replayed!.raw.keys()].filter((name) => !RE_ENCODED.has(name) && name !== 'x-delivery-count' && name !== 'x-acquired-count');
  expect(added).toEqual([]);
}, 60_000);
