/**
 * vitest globalSetup: lists the broker's queues and exchanges before the whole run and after it, and
 * fails the run naming every one this run's `uniqueName` named that it left (test/helpers/leftovers.ts).
 * The workers inherit the variable naming the run's list of names, so a run beside this one on the
 * same broker (another checkout's `npm test`) is never blamed. rabbitmqctl reaches the node that
 * serves AMQP_URL (test/helpers/broker-ctl.ts); it cannot list a remote broker, so such a run fails
 * here, loudly, as a run without a broker does.
 */
import { randomUUID } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUN_NAMES_FILE } from './broker.js';
import { leftovers, listBrokerNames } from './leftovers.js';

async function setup(): Promise<() => Promise<void>> {
  const namesFile = join(tmpdir(), `boomerang-test-run-${randomUUID()}.names`);
  await writeFile(namesFile, '');
  process.env[RUN_NAMES_FILE] = namesFile;
  const before = await listBrokerNames();
  return async () => {
    const made = (await readFile(namesFile, 'utf8')).split('\n').filter((name) => name !== '');
    await rm(namesFile, { force: true });
    const left = leftovers(before, await listBrokerNames(), made);
    if (left.length > 0) {
      // vitest prints a teardown's error but still exits 0: the exit code is set here.
      process.exitCode = 1;
      throw new Error(
        `The tests left ${left.length} queue(s) or exchange(s) on the broker; delete them in the test that makes them (TestBroker.trackQueue/trackExchange, trackPlan):\n  ${left.join('\n  ')}`,
      );
    }
  };
}

export { setup };
