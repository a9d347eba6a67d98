import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AMQP_URL, uniqueName } from '../helpers/broker.js';
import { BROKER_VERSION, NATIVE_BROKER } from '../helpers/broker-version.js';
import { consoleUrl, startConsole, stopConsole } from '../helpers/console-process.js';
import { useTestBroker } from '../helpers/topology.js';
import { tempFunctionsDir, writeQueueFile } from '../fixtures/queue-files.js';
import { type CliRun, callBoomerang } from '../helpers/boomerang-cli.js';

/**
 * A queue declared with `delayMode: 'native'` in a functions folder, worked the way a team works it:
 * `boomerang topology apply`, `boomerang invoke pull` as the schedule would, and `boomerang console`.
 */
const version = BROKER_VERSION;
const NATIVE = NATIVE_BROKER;

const broker = useTestBroker();

/** `boomerang <command> <args>` with AMQP_URL and `env`. */
function run(command: string, args: string[], env: Record<string, string>): Promise<CliRun> {
  return callBoomerang([command, ...args], { env: { ...process.env, AMQP_URL, LOG_LEVEL: 'silent', ...env } });
}

describe(`a native queue in a functions folder, on RabbitMQ ${version}`, () => {
  let functions: ReturnType<typeof tempFunctionsDir>;
  const workQueue = uniqueName('native-orders');
  const env = (): Record<string, string> => ({ BOOMERANG_FUNCTIONS_DIR: functions.dir });

  beforeAll(() => {
    functions = tempFunctionsDir();
    writeQueueFile(functions.dir, { template: 'orders-native', name: 'natorders', workQueue });
  });
  afterAll(() => functions.remove());

  it.runIf(NATIVE)('applies, retries, parks and shows in the console', async () => {
    // Prepare
    broker().trackQueue(workQueue, `${workQueue}.parked`);
    const applied = await run('topology', ['apply', '--function', 'natorders'], env());
    expect(applied.code, applied.stderr).toBe(0);
    for (const body of ['ok-1', 'fail-1', 'bad-1', 'ok-2']) broker().channel.sendToQueue(workQueue, Buffer.from(body), { persistent: true, messageId: body });
    // Act: invocations as the schedule makes them, until both failures are parked.
    const summaries: Record<string, number>[] = [];
    for (let i = 0; i < 8 && (await broker().messageCount(`${workQueue}.parked`)) < 2; i++) {
      const invoked = await run('invoke', ['pull', '--function', 'natorders', '--budget-ms', '3000'], env());
      expect(invoked.code, invoked.stderr).toBe(0);
      summaries.push(JSON.parse(invoked.stdout.trim().split('\n').at(-1) as string) as Record<string, number>);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const operator = startConsole(['--function', 'natorders'], env());
    const url = await consoleUrl(operator);
    const token = String(new URL(url as string).searchParams.get('token'));
    const groups = (await (await fetch(new URL('/api/queues/natorders/groups?refresh=1', url), { headers: { 'x-boomerang-token': token } })).json()) as {
      groups: { errorName: string; count: number }[];
    };
    await stopConsole(operator);
    // Assess
    const sum = (key: string): number => summaries.reduce((n, s) => n + (s[key] ?? 0), 0);
    expect([sum('acked'), sum('retried'), sum('parked')]).toEqual([2, 2, 2]);
    expect(await broker().messageCount(workQueue)).toBe(0);
    expect(groups.groups.map((g) => [g.errorName, g.count]).sort()).toEqual([
      ['Error', 1],
      ['UnrecoverableError', 1],
    ]);
  });

  it.runIf(!NATIVE)('is refused by topology apply, naming the broker version and the modes that work there', async () => {
    // Act
    const applied = await run('topology', ['apply', '--function', 'natorders'], env());
    // Assess
    expect(applied.code).not.toBe(0);
    expect(applied.stderr).toContain(version);
    expect(applied.stderr).toContain("use delayMode 'tiers' or 'exact'");
    expect(await broker().exists('queue', workQueue)).toBe(false);
  });
});
