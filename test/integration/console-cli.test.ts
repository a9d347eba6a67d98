import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleUrl, startConsole, stopConsole as stop } from '../helpers/console-process.js';
import { parkThreeKinds } from '../helpers/console-fixture.js';
import { useTestBroker } from '../helpers/topology.js';
import { tempFunctionsDir, writeQueueFile } from '../fixtures/queue-files.js';

const broker = useTestBroker();

describe('boomerang console', () => {
  it('prints the URL with its token as the last start-up line, never the password, and stops on Ctrl-C', async () => {
    // Prepare
    const { work } = await parkThreeKinds(broker());
    const run = startConsole(['--work-queue', work]);
    // Act
    const url = (await consoleUrl(run)) as string;
    const landing = await fetch(url, { redirect: 'manual' });
    const without = await fetch(new URL('/api/overview', url));
    const code = await stop(run);
    // Assess
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}$/);
    expect(run.stdout()).toContain(`${work}: parking lot ${work}.parked`);
    expect(run.stdout()).not.toContain('guest:guest');
    expect([landing.status, without.status]).toEqual([200, 401]);
    expect(code).toBe(0);
  });

  it('refuses --work-queue with --function, naming both (exit 2)', async () => {
    // Act
    const run = startConsole(['--work-queue', 'orders', '--function', 'orders']);
    const [code] = await once(run.child, 'exit');
    // Assess
    expect(code).toBe(2);
    expect(run.stderr()).toContain('--work-queue and --function go separately');
  });
});

describe('boomerang console over the declared queues', () => {
  let functions: ReturnType<typeof tempFunctionsDir>;
  let lots: { work: string; parked: string }[];

  // The lots are deleted after the first test (useTestBroker cleans up after each); the others do not read them.
  beforeAll(async () => {
    functions = tempFunctionsDir();
    lots = [await parkThreeKinds(broker()), await parkThreeKinds(broker())];
    writeQueueFile(functions.dir, { template: 'orders', name: 'orders', workQueue: lots[0]?.work as string });
    writeQueueFile(functions.dir, { template: 'orders', name: 'invoices', workQueue: lots[1]?.work as string });
  });
  afterAll(() => functions.remove());

  it('shows every declared queue by default: each under its name, with its work queue and parking lot', async () => {
    // Prepare
    const [orders, invoices] = lots as [{ work: string; parked: string }, { work: string; parked: string }];
    const run = startConsole([], { BOOMERANG_FUNCTIONS_DIR: functions.dir });
    // Act
    const url = (await consoleUrl(run)) as string;
    const overview = (await (
      await fetch(new URL('/api/overview', url), { headers: { 'x-boomerang-token': String(new URL(url).searchParams.get('token')) } })
    ).json()) as { queues: { name: string; work: { name: string }; parking: { name: string; depth: number } }[] };
    const code = await stop(run);
    // Assess: files are read in name order
    expect(run.stdout()).toContain(`invoices (work queue ${invoices.work}): parking lot ${invoices.parked}`);
    expect(run.stdout()).toContain(`orders (work queue ${orders.work}): parking lot ${orders.parked}`);
    expect(overview.queues.map((q) => [q.name, q.work.name, q.parking.name, q.parking.depth])).toEqual([
      ['invoices', invoices.work, invoices.parked, 9],
      ['orders', orders.work, orders.parked, 9],
    ]);
    expect(code).toBe(0);
  });

  it('--function shows only the declared queues it names', async () => {
    // Prepare
    const run = startConsole(['--function', 'orders'], { BOOMERANG_FUNCTIONS_DIR: functions.dir });
    // Act
    await consoleUrl(run);
    const code = await stop(run);
    // Assess
    expect(run.stdout()).toContain(`orders (work queue ${lots[0]?.work})`);
    expect(run.stdout()).not.toContain('invoices');
    expect(code).toBe(0);
  });

  it('refuses an undeclared --function, listing the declared queues (exit 2, before it connects)', async () => {
    // Act
    const run = startConsole(['--function', 'refunds'], { BOOMERANG_FUNCTIONS_DIR: functions.dir });
    const [code] = await once(run.child, 'exit');
    // Assess
    expect(code).toBe(2);
    expect(run.stderr()).toContain('--function refunds: no such queue; the declared queues are invoices, orders');
  });
});
