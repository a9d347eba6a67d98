/**
 * `boomerang console --remote <function>` (issue 30, item 2): the console's walks, depths and check
 * go through the operator function, invoked by the AWS SDK's Lambda client at a local endpoint that
 * runs the real handler (test/helpers/local-lambda.ts) on the real broker. Two identical lots, one
 * behind a direct console and one behind a remote one, get the same requests: the answers are the
 * same JSON, and what the actions send is byte for byte the same. Reads come in 16 KiB pages here
 * (4 MiB in Lambda), so a message larger than a page is fetched in parts; actions run in slices.
 */
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { lambdaInvoker } from '../../shared/cli/lambda-invoker.js';
import { remoteConsoleBroker } from '../../shared/cli/remote-console-broker.js';
import { configBroker } from '../../shared/console/console-broker.js';
import { consoleQueuesFromConfig } from '../../shared/console/console-queue.js';
import { ConsoleService } from '../../shared/console/console-service.js';
import type { Job } from '../../shared/console/jobs.js';
import { createOperatorConsoleFunction } from '../../shared/console/operator-console.js';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { readerLockQueue } from '../../shared/parked/reader-lock.js';
import { AMQP_URL, type TestBroker, uniqueName } from '../helpers/broker.js';
import { consoleTestConfig, parkThreeKinds } from '../helpers/console-fixture.js';
import { BODY, readRaw, ZOO } from '../helpers/header-zoo.js';
import { LocalLambda } from '../helpers/local-lambda.js';
import { rawPublish, sized } from '../helpers/raw-publish.js';
import { useTestBroker } from '../helpers/topology.js';
import { consoleUrl, startConsole, stopConsole } from '../helpers/console-process.js';
import { tempFunctionsDir, writeQueueFile } from '../fixtures/queue-files.js';
import { loadDeclaredQueues } from '../../shared/queues/declared-queues.js';

const PAGE_BYTES = 16 * 1024;
/** A body four pages long, not all ASCII. */
const BIG_BODY = JSON.stringify({ note: 'é€😀'.repeat(10), pad: 'x'.repeat(4 * PAGE_BYTES) });

const broker = useTestBroker();
let lambda: LocalLambda;
const savedEnv = { ...process.env };

beforeAll(async () => {
  lambda = await LocalLambda.start();
  // The SDK in this process reaches the local endpoint with dummy credentials, as the CLI's does.
  Object.assign(process.env, lambda.env);
});
afterAll(async () => {
  for (const name of Object.keys(lambda.env)) {
    if (savedEnv[name] === undefined) delete process.env[name];
    else process.env[name] = savedEnv[name];
  }
  await lambda.close();
});

/** The three kinds parked, then a message from another client with every header type, and one bigger than four pages. */
async function seedLot(b: TestBroker): Promise<{ work: string; parked: string }> {
  const { work, parked } = await parkThreeKinds(b);
  await rawPublish({
    queue: parked,
    messageId: 'zoo',
    headers: [...ZOO, [BoomerangHeader.sourceQueue, 'S', sized(Buffer.from(work))], [BoomerangHeader.errorName, 'S', sized(Buffer.from('ZooError'))]],
    body: BODY,
  });
  const channel = await b.connection.createConfirmChannel();
  channel.sendToQueue(parked, Buffer.from(BIG_BODY), {
    persistent: true,
    messageId: 'big',
    contentType: 'application/json',
    headers: {
      [BoomerangHeader.sourceQueue]: work,
      [BoomerangHeader.errorName]: 'PartnerDown',
      [BoomerangHeader.errorMessage]: 'POST https://partner.example/hooks/9 returned 503',
    },
  });
  await channel.waitForConfirms();
  await channel.close();
  return { work, parked };
}

/** A direct console on `near`'s lot and a remote one (through `<far>-operator`) on `far`'s. */
function consoles(near: string, far: string): { direct: ConsoleService; remote: ConsoleService } {
  const nearConfig = consoleTestConfig(near);
  const farConfig = consoleTestConfig(far);
  const name = `${far}-operator`;
  lambda.serve(
    name,
    createOperatorConsoleFunction([{ name: 'orders', loadConfig: (env) => loadConfig(env, 'boomerang-orders-operator') }], {
      env: { AMQP_URL, WORK_QUEUE: far },
    }),
  );
  return {
    direct: new ConsoleService({ queues: consoleQueuesFromConfig(nearConfig), broker: configBroker(nearConfig), retryHeader: nearConfig.retryHeader }),
    remote: new ConsoleService({
      queues: consoleQueuesFromConfig(farConfig),
      broker: remoteConsoleBroker(lambdaInvoker(name), { name, pageBytes: PAGE_BYTES, sliceMs: 1 }),
      retryHeader: farConfig.retryHeader,
    }),
  };
}

/**
 * JSON with the far lot's names as the near lot's, without what differs between any two reads: the
 * broker's name, times, ages in milliseconds, the broker's read counts (each read raises them on a quorum queue).
 */
function same(value: unknown, far: string, near: string): string {
  return (
    JSON.stringify(value)
      .replaceAll(far, near)
      .replace(/"broker":"[^"]*"/, '"broker":""')
      // The two lots were parked a moment apart: their park times differ, not what the consoles read of them.
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, 'T')
      .replace(/"(readAt|ageMs)":("[^"]*"|\d+)/g, '"$1":0')
      .replace(/("x-(?:delivery|acquired)-count":)\d+/g, '$10')
  );
}

async function finished(service: ConsoleService, job: Job): Promise<Job> {
  await service.jobs.idle();
  return job;
}

describe('boomerang console --remote', () => {
  it('answers the overview, groups, messages and a message larger than a page as the direct console does', async () => {
    // Prepare
    const near = await seedLot(broker());
    const far = await seedLot(broker());
    const { direct, remote } = consoles(near.work, far.work);
    const query = new URLSearchParams('error=PartnerDown');
    // Act
    const reads = [
      [await direct.overview(), await remote.overview()],
      [await direct.groups(near.work, true), await remote.groups(far.work, true)],
      [await direct.messages(near.work, query), await remote.messages(far.work, query)],
      [await direct.messages(near.work, new URLSearchParams()), await remote.messages(far.work, new URLSearchParams())],
      [await direct.message(near.work, { messageId: 'zoo' }), await remote.message(far.work, { messageId: 'zoo' })],
    ];
    const before = lambda.responses.length;
    const big = await remote.message(far.work, { messageId: 'big' });
    const pages = lambda.responses.length - before;
    const bigNear = await direct.message(near.work, { messageId: 'big' });
    // Assess
    for (const [i, [n, f]] of reads.entries()) expect(same(f, far.work, near.work), `read ${i}`).toBe(same(n, near.work, near.work));
    expect(same(big, far.work, near.work) === same(bigNear, near.work, near.work)).toBe(true);
    expect((big as { edit: { body: { text: string } } }).edit.body.text === BIG_BODY).toBe(true);
    expect(pages).toBeGreaterThan(4);
    for (const size of lambda.responses) expect(size).toBeLessThan((PAGE_BYTES * 4) / 3 + 4096);
    const overview = reads[0]![1] as { broker: string; queues: { parking: { depth: number } }[] };
    expect(overview.broker).toBe(`the broker behind the operator function ${far.work}-operator`);
    expect(overview.queues[0]!.parking.depth).toBe(11);
    expect(await broker().messageCount(far.parked)).toBe(11);
  }, 120_000);

  it('replays a group in slices, a message from another client, purges a group and edits and replays a message as the direct console does, byte for byte', async () => {
    // Prepare
    const near = await seedLot(broker());
    const far = await seedLot(broker());
    const { direct, remote } = consoles(near.work, far.work);
    const groupOf = async (service: ConsoleService, work: string, errorName: string): Promise<string> =>
      (await service.groups(work, true)).groups.find((g) => g.errorName === errorName)!.key;
    const edit = { body: '{"kind":"fixed"}', headers: { set: { tenant: 'globex' }, remove: [] } };
    const results: [unknown, unknown][] = [];
    const counts: [unknown, unknown][] = [];
    const run = async (act: (service: ConsoleService, work: string) => Promise<Job>): Promise<void> => {
      const n = await finished(direct, await act(direct, near.work));
      const f = await finished(remote, await act(remote, far.work));
      results.push([n.state === 'done' ? n.result : n.error, f.state === 'done' ? f.result : f.error]);
      counts.push([n.counts, f.counts]);
    };
    // Act
    const before = lambda.responses.length;
    await run(async (s, work) => s.replay(work, { group: await groupOf(s, work, 'PartnerDown'), expectedCount: 5, ratePerSecond: 1000 }));
    const replaySlices = lambda.responses.length - before;
    await run(async (s, work) => s.replay(work, { 'message-id': 'zoo', expectedCount: 1 }));
    await run(async (s, work) => s.purge(work, { group: await groupOf(s, work, 'ValidationError'), expectedCount: 2 }));
    await run(async (s, work) => s.editReplay(work, 'TimeoutError-0', edit));
    // Assess
    for (const [i, [n, f]] of results.entries()) expect(same(f, far.work, near.work), `action ${i}`).toBe(same(n, near.work, near.work));
    for (const [i, [n, f]] of counts.entries()) expect(f, `counts of action ${i}`).toEqual(n);
    expect(results.map(([, f]) => f)).toEqual([
      expect.objectContaining({ selected: 5, byQueue: { [far.work]: 5 } }),
      expect.objectContaining({ selected: 1, byQueue: { [far.work]: 1 } }),
      expect.objectContaining({ selected: 2, deleted: 2 }),
      expect.objectContaining({ found: true, edited: true, replayedTo: far.work }),
    ]);
    expect(replaySlices).toBeGreaterThan(2);
    const [sentNear, sentFar] = [await readRaw(near.work), await readRaw(far.work)];
    expect(sentFar.map(({ message }) => message.properties.messageId)).toEqual(sentNear.map(({ message }) => message.properties.messageId));
    expect(sentFar).toHaveLength(7);
    const hex = (raw: ReadonlyMap<string, Buffer>): Map<string, string> =>
      new Map(
        [...raw].map(([name, value]) => [
          name,
          name === 'boomerang-edited' ? value.toString('latin1').replace(/edited-at=[^;]*/, 'edited-at=') : value.toString('hex'),
        ]),
      );
    for (const [i, { message, raw }] of sentFar.entries()) {
      const twin = sentNear[i]!;
      expect(message.content.equals(twin.message.content), `body of ${message.properties.messageId}`).toBe(true);
      expect(hex(raw), `headers of ${message.properties.messageId}`).toEqual(hex(twin.raw));
    }
    expect(sentFar.find(({ message }) => message.properties.messageId === 'big')!.message.content.toString('utf8') === BIG_BODY).toBe(true);
    expect(sentFar.find(({ message }) => message.properties.messageId === 'zoo')!.message.content.equals(BODY)).toBe(true);
    expect(await broker().messageCount(far.parked)).toBe(await broker().messageCount(near.parked));
  }, 180_000);

  it('shows a queue never declared as missing, and a read of its lot says so with the command that declares it, as the direct console does', async () => {
    // Prepare: nothing declared on the broker for either
    const [near, far] = [uniqueName('console-bare'), uniqueName('console-bare')];
    for (const work of [near, far]) broker().trackQueue(`${work}.parked`, readerLockQueue(`${work}.parked`));
    const { direct, remote } = consoles(near, far);
    const failure = (read: Promise<unknown>): Promise<string> =>
      read.then(
        () => 'no error',
        (error: Error) => `${error.name}: ${error.message}`,
      );
    // Act
    const overviews = [await direct.overview(), await remote.overview()];
    const errors = [await failure(direct.groups(near, true)), await failure(remote.groups(far, true))];
    // Assess
    expect(same(overviews[1], far, near)).toBe(same(overviews[0], near, near));
    expect(errors[1]!.replaceAll(far, near)).toBe(errors[0]);
    expect(errors[1]).toMatch(/^QueueNotDeclaredError: there is no queue ".*": the topology of .* is not declared yet; run PARKING_QUEUE=/);
  }, 60_000);

  it('`boomerang console --remote <fn>` says it goes through the function, and shows the declared queues with no broker reachable from here', async () => {
    // Prepare: the function serves the queue declared in functions/; the CLI's own AMQP_URL leads nowhere
    const { work, parked } = await parkThreeKinds(broker());
    const functions = tempFunctionsDir();
    writeQueueFile(functions.dir, { template: 'orders', name: 'orders', workQueue: work });
    const name = `${work}-operator`;
    lambda.serve(name, createOperatorConsoleFunction(await loadDeclaredQueues({ dir: functions.dir, env: { AMQP_URL } }), { env: { AMQP_URL } }));
    const env = {
      ...lambda.env,
      AMQP_URL: 'amqp://guest:guest@127.0.0.1:1',
      BOOMERANG_FUNCTIONS_DIR: functions.dir,
      BOOMERANG_REMOTE_PAGE_BYTES: String(PAGE_BYTES),
    };
    try {
      const run = startConsole(['--remote', name], env);
      // Act
      const url = (await consoleUrl(run)) as string;
      const headers = { 'x-boomerang-token': String(new URL(url).searchParams.get('token')) };
      const overview = (await (await fetch(new URL('/api/overview', url), { headers })).json()) as {
        broker: string;
        queues: { name: string; parking: { name: string; depth: number } }[];
      };
      const groups = (await (await fetch(new URL('/api/queues/orders/groups?refresh=1', url), { headers })).json()) as { groups: { count: number }[] };
      const code = await stopConsole(run);
      const mixed = startConsole(['--remote', name, '--work-queue', work], env);
      const [mixedCode] = await once(mixed.child, 'exit');
      // Assess
      const lines = run.stdout().split('\n');
      expect(lines.slice(0, 2)).toEqual([
        `Boomerang console for the broker behind the operator function ${name}`,
        `  every read and action goes through the operator function ${name} (Lambda Invoke, with your AWS credentials)`,
      ]);
      expect(lines[2]).toMatch(new RegExp(`^  orders \\(work queue ${work}\\): parking lot ${parked}, \\d+ delay queue\\(s\\)$`));
      expect(overview.broker).toBe(`the broker behind the operator function ${name}`);
      expect(overview.queues.map((q) => [q.name, q.parking.name, q.parking.depth])).toEqual([['orders', parked, 9]]);
      expect(groups.groups.map((g) => g.count)).toEqual([4, 3, 2]);
      expect(code).toBe(0);
      expect(mixedCode).toBe(2);
      expect(mixed.stderr()).toContain('--remote shows the declared queues');
    } finally {
      functions.remove();
    }
  }, 60_000);
});
