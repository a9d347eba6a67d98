import { describe, expect, it } from 'vitest';
import { tempFunctionsDir, writeQueueFile } from '../fixtures/queue-files.js';
import { agedLot } from '../helpers/aged-lot.js';
import { runParkedCli } from '../helpers/parked-cli.js';
import { useTestBroker } from '../helpers/topology.js';

const broker = useTestBroker();

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
    expect(replay.stdout.trim()).toBe(`will replay 3 to ${work}\nreplayed 3 to ${work}`);
    expect((await broker().drain(work, 3)).map((m) => m.properties.messageId)).toEqual(['m-0', 'm-2', 'm-4']);
    expect(await broker().messageCount(parked)).toBe(3);
  });

  it('purge --function <name> acts on the parking lot of that declared queue, whatever WORK_QUEUE says', async () => {
    // Prepare
    const { work, parked } = await agedLot(broker());
    const functions = tempFunctionsDir();
    try {
      writeQueueFile(functions.dir, { template: 'orders', name: 'orders', workQueue: work });
      const env = { BOOMERANG_FUNCTIONS_DIR: functions.dir };
      // Act
      const run = await runParkedCli(['purge', '--function', 'orders', '--older-than', '3d', '--yes'], 'not-this-one', env);
      const unknown = await runParkedCli(['list', '--function', 'refunds'], work, env);
      const both = await runParkedCli(['list', '--function', 'orders', '--parking-queue', parked], work, env);
      // Assess
      expect(run.code).toBe(0);
      expect(run.stdout.trim()).toBe('deleted 3');
      expect((await broker().drain(parked, 3)).map((m) => m.properties.messageId)).toEqual(['m-0', 'm-1', 'm-2']);
      expect([unknown.code, both.code]).toEqual([2, 2]);
      expect(unknown.stderr).toContain('--function refunds: no such queue; the declared queues are orders');
      expect(both.stderr).toContain('--parking-queue and --function go separately');
    } finally {
      functions.remove();
    }
  });
});
