import { describe, expect, it } from 'vitest';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { type TestBroker, uniqueName } from '../helpers/broker.js';
import { runParkedCli } from '../helpers/parked-cli.js';
import { useTestBroker } from '../helpers/topology.js';

const DAY_MS = 86_400_000;
const broker = useTestBroker();


/** Six parked messages, m-0 parked 0 days ago ... m-5 five days ago; even ones PartnerDown, odd ones Invalid. */
async function agedLot(b: TestBroker): Promise<{ work: string; parked: string }> {
  const work = uniqueName('retention');
  const parked = `${work}.parked`;
  b.trackQueue(work, parked);
  const channel = await b.connection.createConfirmChannel();
  for (const queue of [work, parked]) await channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  for (let i = 0; i < 6; i++) {
    channel.sendToQueue(parked, Buffer.from(`{"n":${i}}`), {
      persistent: true,
      messageId: `m-${i}`,
      headers: {
        [BoomerangHeader.errorName]: i % 2 === 0 ? 'PartnerDown' : 'Invalid',
        [BoomerangHeader.errorMessage]: i % 2 === 0 ? `HTTP 50${i}` : `field ${i} missing`,
        [BoomerangHeader.parkedAt]: new Date(Date.now() - i * DAY_MS - 60_000).toISOString(),
        [BoomerangHeader.sourceQueue]: work,
      },
    });
  }
  await channel.waitForConfirms();
  await channel.close();
  return { work, parked };
}

describe('parked CLI: retention and groups', () => {
  it('purge --older-than 3d --yes deletes only what was parked 3 days ago or more, and keeps the rest in order', async () => {
    // Prepare
    const { work, parked } = await agedLot(broker());
    // Act
    const run = await runParkedCli(['purge', '--older-than', '3d', '--yes'], work);
    // Assess
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe('deleted 3');
    const left = await broker().drain(parked, 3);
    expect(left.map((m) => m.properties.messageId)).toEqual(['m-0', 'm-1', 'm-2']);
  });

  it('groups prints each cause with its --group key, and replay --group replays exactly that group', async () => {
    // Prepare
    const { work, parked } = await agedLot(broker());
    // Act
    const groups = await runParkedCli(['groups'], work);
    const key = `PartnerDown|HTTP <n>|${work}`;
    const replay = await runParkedCli(['replay', '--group', key], work);
    // Assess
    expect(groups.code).toBe(0);
    expect(groups.stdout).toMatch(/^COUNT\s+FIRST SEEN\s+LAST SEEN\s+ERROR\s+MESSAGE\s+SOURCE/);
    expect(groups.stdout).toContain(`--group ${JSON.stringify(key)}`);
    expect(groups.stdout).toContain(`--group ${JSON.stringify(`Invalid|field <n> missing|${work}`)}`);
    expect(replay.stdout.trim()).toBe(`replayed 3 to ${work}`);
    expect((await broker().drain(work, 3)).map((m) => m.properties.messageId)).toEqual(['m-0', 'm-2', 'm-4']);
    expect(await broker().messageCount(parked)).toBe(3);
  });
});
