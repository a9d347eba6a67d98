/**
 * `boomerang parked … --remote <function>` (issue 30, item 2): the real CLI invokes the operator
 * function through the AWS SDK's Lambda client, pointed at a local endpoint that runs the real handler
 * (test/helpers/local-lambda.ts), which runs the engine on the real broker. The CLI has no AMQP_URL:
 * everything goes through the function. Each command prints what the direct command prints for the
 * same lot; reads come in 64 KiB pages here (4 MiB in Lambda), so a message bigger than a page is
 * fetched in parts; a replayed message is byte for byte the one a direct replay sends.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { createOperatorFunction } from '../../shared/parked/operator-function.js';
import { readerLockQueue } from '../../shared/parked/reader-lock.js';
import { BROKER_VERSION } from '../helpers/broker-version.js';
import { brokerMajor } from '../../shared/topology/delivery-limit.js';
import { AMQP_URL, type TestBroker, uniqueName } from '../helpers/broker.js';
import { answerOnTerminal, boomerangArgs, type CliRun, callBoomerang } from '../helpers/boomerang-cli.js';
import { BODY, readRaw, ZOO } from '../helpers/header-zoo.js';
import { LocalLambda } from '../helpers/local-lambda.js';
import { rawPublish, sized } from '../helpers/raw-publish.js';
import { useTestBroker } from '../helpers/topology.js';

const PAGE_BYTES = 64 * 1024;
/** A body three pages long, not all ASCII. */
const BIG_BODY = JSON.stringify({ note: 'é€😀'.repeat(10), pad: 'x'.repeat(3 * PAGE_BYTES) });
/** An old park time, so the ages both runs print are the same. */
const PARKED_AT = '2026-01-02T03:04:05.000Z';

const broker = useTestBroker();
let lambda: LocalLambda;

beforeAll(async () => {
  lambda = await LocalLambda.start();
});
afterAll(() => lambda.close());

/** Serves the operator function of one queue, `orders` (its work queue `work`), as `orders-operator`. */
function serveOperator(work: string): void {
  lambda.serve(
    'orders-operator',
    createOperatorFunction([{ name: 'orders', loadConfig: (env) => loadConfig(env, 'boomerang-orders-operator') }], { env: { AMQP_URL, WORK_QUEUE: work } }),
  );
}

/** `boomerang parked <args>` on a direct connection. */
function direct(args: string[], work: string): Promise<CliRun> {
  return callBoomerang(['parked', ...args], { env: { PATH: process.env.PATH, AMQP_URL, WORK_QUEUE: work } });
}

/** `boomerang parked <args> --remote orders-operator`, with AWS credentials and no broker URL. */
function remote(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return callBoomerang(['parked', ...args, '--remote', 'orders-operator'], {
    env: { PATH: process.env.PATH, ...lambda.env, BOOMERANG_REMOTE_PAGE_BYTES: String(PAGE_BYTES), ...env },
  });
}

/**
 * stdout without what differs between two runs of the same command on the same lot: `list --json`'s
 * ages in milliseconds (the table's, in days, do not), and the broker's read counts `show` prints
 * (each read raises them on a quorum queue).
 */
function rows(stdout: string): string {
  return stdout.replace(/"ageMs":\d+/g, '"ageMs":0').replace(/("?x-(?:delivery|acquired)-count"?:?\s*)\d+/g, '$10');
}

/** Where two texts first differ (a short excerpt), or 'same': a 200 KiB body in a failure message helps no one. */
function firstDifference(a: string, b: string): string {
  if (a === b) return 'same';
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return `differ at ${i} of ${a.length}/${b.length}: ${JSON.stringify(a.slice(i, i + 80))} vs ${JSON.stringify(b.slice(i, i + 80))}`;
}

/** stderr without the rate (msg/s), which differs from run to run. */
function notes(stderr: string): string {
  return stderr.replace(/ · \d+ msg\/s/g, '');
}

/**
 * A quorum parking lot as Boomerang's topology declares it: on 4.x with no delivery limit, since
 * RabbitMQ 4.0-4.2 count each read (a requeueing nack) toward the default limit of 20, and these tests
 * read the lot many times.
 */
const BOOMERANG_LOT: Record<string, unknown> = { 'x-queue-type': 'quorum', ...((brokerMajor(BROKER_VERSION) ?? 0) >= 4 ? { 'x-delivery-limit': -1 } : {}) };

/** A work queue and its parking lot (quorum) with parked messages: three plain ones, one from another client with every header type, one bigger than a page. */
async function seedLot(b: TestBroker): Promise<{ work: string; parked: string }> {
  const work = uniqueName('remote.work');
  const parked = `${work}.parked`;
  b.trackQueue(work, parked);
  const channel = await b.connection.createConfirmChannel();
  await channel.assertQueue(work, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await channel.assertQueue(parked, { durable: true, arguments: BOOMERANG_LOT });
  const park = (messageId: string, body: string, errorName: string): void => {
    channel.sendToQueue(parked, Buffer.from(body), {
      persistent: true,
      messageId,
      headers: {
        [BoomerangHeader.sourceQueue]: work,
        [BoomerangHeader.errorName]: errorName,
        [BoomerangHeader.errorMessage]: `HTTP 503 for ${messageId}`,
        [BoomerangHeader.parkedAt]: PARKED_AT,
      },
    });
  };
  park('m-0', '{"n":0}', 'PartnerDown');
  park('m-1', '{"n":1}', 'Invalid');
  await channel.waitForConfirms();
  await rawPublish({ queue: parked, messageId: 'zoo', headers: [...ZOO, [BoomerangHeader.sourceQueue, 'S', sized(Buffer.from(work))]], body: BODY });
  park('big', BIG_BODY, 'PartnerDown');
  park('m-2', '{"n":2}', 'PartnerDown');
  await channel.waitForConfirms();
  await channel.close();
  return { work, parked };
}

describe('boomerang parked --remote', () => {
  it('lists, groups and shows what the direct command shows, a body three pages long fetched in parts, and leaves the lot as it was', async () => {
    // Prepare
    const { work, parked } = await seedLot(broker());
    serveOperator(work);
    const reads = [
      ['list'],
      ['list', '--json'],
      ['list', '--limit', '2', '--error', 'PartnerDown'],
      ['groups'],
      ['groups', '--json'],
      ['show', 'big', '--json', '--body-chars', '1000000'],
      ['show', 'zoo'],
    ];

    for (const args of reads) {
      // Act
      const near = await direct(args, work);
      const before = lambda.responses.length;
      const far = await remote(args);
      // Assess
      expect(far.code, `${args.join(' ')}: ${far.stderr}`).toBe(near.code);
      expect(firstDifference(rows(far.stdout), rows(near.stdout)), args.join(' ')).toBe('same');
      expect(notes(far.stderr), args.join(' ')).toBe(notes(near.stderr));
      for (const size of lambda.responses.slice(before)) expect(size).toBeLessThan((PAGE_BYTES * 4) / 3 + 4096);
    }
    expect(Buffer.byteLength(BIG_BODY)).toBeGreaterThan(3 * PAGE_BYTES);
    // The whole body came through (pretty-printed, as show prints JSON), nothing cut.
    const shown = JSON.parse((await remote(['show', 'big', '--json', '--body-chars', '1000000'])).stdout) as { body: { text: string; cut: boolean } };
    expect(shown.body.cut).toBe(false);
    expect(JSON.stringify(JSON.parse(shown.body.text)) === BIG_BODY).toBe(true);
    const order = (await broker().drain(parked, 5)).map((m) => m.properties.messageId);
    expect(order).toEqual(['m-0', 'm-1', 'zoo', 'big', 'm-2']);
  }, 180_000);

  it('says the same when nothing matches or the lot does not exist, refuses a queue that is not a declared lot, and an unknown function by name', async () => {
    // Prepare
    const { work } = await seedLot(broker());
    serveOperator(work);
    // Act
    const near = await direct(['show', 'nope'], work);
    const far = await remote(['show', 'nope']);
    const missing = await callBoomerang(['parked', 'list', '--remote', 'no-such-operator'], {
      env: { PATH: process.env.PATH, ...lambda.env },
    });
    const stray = await remote(['purge', '--yes', '--parking-queue', work]);
    // A work queue whose parking lot was never declared
    const bare = uniqueName('remote.bare');
    broker().trackQueue(bare, readerLockQueue(`${bare}.parked`));
    await broker().channel.assertQueue(bare, { durable: true });
    serveOperator(bare);
    const [nearNoLot, farNoLot] = [await direct(['list'], bare), await remote(['list'])];
    // Assess
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain(`--parking-queue ${work}: the operator function serves the parking lots ${work}.parked (orders) only`);
    expect(farNoLot.code).toBe(1);
    // The direct command printed its (empty) report before the error; the function's error comes alone.
    expect(farNoLot.stderr.trim().split('\n').at(-1)).toBe(nearNoLot.stderr.trim().split('\n').at(-1));
    expect(farNoLot.stderr).toContain(`there is no queue "${bare}.parked"`);
    expect(far.code).toBe(1);
    expect(notes(far.stderr)).toBe(notes(near.stderr));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('could not invoke the operator function no-such-operator: ResourceNotFoundException');
  }, 60_000);

  it("replays in slices, with the direct command's output, and the replayed messages are byte for byte what a direct replay sends", async () => {
    // Prepare: two identical lots, one replayed directly, one through the function
    const near = await seedLot(broker());
    const far = await seedLot(broker());
    serveOperator(far.work);
    // Act
    const nearRun = await direct(['replay'], near.work);
    const before = lambda.responses.length;
    const farRun = await remote(['replay'], { BOOMERANG_REMOTE_SLICE_MS: '1' });
    const slices = lambda.responses.length - before - 2;
    // Assess
    expect(farRun.code, farRun.stderr).toBe(0);
    expect(farRun.stdout.replaceAll(far.work, near.work)).toBe(nearRun.stdout);
    expect(farRun.stdout).toBe(`will replay 5 to ${far.work}\nreplayed 5 to ${far.work}\n`);
    expect(
      notes(farRun.stderr)
        .split('\n')
        .filter((l) => l.startsWith('replay: ')),
    ).toEqual(['replay: 5/5 read · 5 replayed · 0 unroutable']);
    expect(slices).toBeGreaterThan(1);
    const [sentNear, sentFar] = [await readRaw(near.work), await readRaw(far.work)];
    expect(sentFar.map(({ message }) => message.properties.messageId)).toEqual(['m-0', 'm-1', 'zoo', 'big', 'm-2']);
    for (const [i, { message, raw }] of sentFar.entries()) {
      const twin = sentNear[i]!;
      expect(message.content.equals(twin.message.content), `body of ${message.properties.messageId}`).toBe(true);
      expect(new Map([...raw].map(([name, value]) => [name, value.toString('hex')])), `headers of ${message.properties.messageId}`).toEqual(
        new Map([...twin.raw].map(([name, value]) => [name, value.toString('hex')])),
      );
    }
    expect(sentFar[2]!.message.content.equals(BODY)).toBe(true);
    expect(await broker().messageCount(far.parked)).toBe(0);
  }, 120_000);

  it('purges as the direct command does: refused without --yes and no terminal, then --yes with a limit across slices', async () => {
    // Prepare
    const { work, parked } = await seedLot(broker());
    serveOperator(work);
    // Act
    const near = await direct(['purge'], work);
    const refused = await remote(['purge']);
    const dryRun = await remote(['purge', '--dry-run']);
    const purged = await remote(['purge', '--yes', '--limit', '3'], { BOOMERANG_REMOTE_SLICE_MS: '1' });
    // Assess
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(near.stderr);
    expect(dryRun.stdout).toBe('would delete 5\n');
    expect(purged.code, purged.stderr).toBe(0);
    expect(purged.stdout).toBe('deleted 3\n');
    expect(notes(purged.stderr)).toContain('purge: 3/5 read · 3 deleted · 0 kept');
    expect((await broker().drain(parked, 2)).map((m) => m.properties.messageId)).toEqual(['big', 'm-2']);
  }, 120_000);

  it('asks on a terminal with the count of a dry run, as the direct command does, and deletes on yes', async () => {
    // Prepare
    const { work, parked } = await seedLot(broker());
    serveOperator(work);
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, ...lambda.env };
    // Act: a terminal that answers y to the question
    const { code, screen } = await answerOnTerminal(['parked', 'purge', '--error', 'Invalid', '--remote', 'orders-operator'], env, 'y');
    // Assess
    expect(code, screen).toBe(0);
    expect(screen).toContain(`Delete 1 of the 5 parked messages in ${parked} (error is Invalid)? This cannot be undone. [y/N]`);
    expect(screen).toContain('deleted 1');
    expect((await broker().drain(parked, 4)).map((m) => m.properties.messageId)).toEqual(['m-0', 'zoo', 'big', 'm-2']);
  }, 60_000);

  it('stops after the running slice on Ctrl-C: what was replayed left the lot, the rest stays parked in order', async () => {
    // Prepare: 60 parked messages, a slice per message
    const work = uniqueName('remote.work');
    const parked = `${work}.parked`;
    broker().trackQueue(work, parked);
    const channel = await broker().connection.createConfirmChannel();
    await channel.assertQueue(work, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    await channel.assertQueue(parked, { durable: true, arguments: BOOMERANG_LOT });
    for (let i = 0; i < 60; i++)
      channel.sendToQueue(parked, Buffer.from(`{"n":${i}}`), {
        persistent: true,
        messageId: `m-${i}`,
        headers: { [BoomerangHeader.sourceQueue]: work, [BoomerangHeader.parkedAt]: PARKED_AT },
      });
    await channel.waitForConfirms();
    await channel.close();
    serveOperator(work);
    const child = spawn(process.execPath, boomerangArgs(['parked', 'replay', '--remote', 'orders-operator']), {
      env: { PATH: process.env.PATH, ...lambda.env, BOOMERANG_REMOTE_SLICE_MS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const closed = new Promise((resolve) => child.once('close', resolve));
    // Act: Ctrl-C once the first slice has replayed its message (the plan's read is over), while the others run
    await broker().holds(work, 1);
    child.kill('SIGINT');
    const code = await closed;
    // Assess
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('stopping after the slice the function is running');
    const replayed = Number(/replayed (\d+) to /.exec(stdout)?.[1]);
    expect(replayed).toBeGreaterThan(0);
    expect(replayed, stderr).toBeLessThan(60);
    expect(stderr).toContain(`stopped after ${replayed} of 60`);
    expect((await broker().drain(work, replayed)).map((m) => m.properties.messageId)).toEqual(Array.from({ length: replayed }, (_, i) => `m-${i}`));
    expect((await broker().drain(parked, 60 - replayed)).map((m) => m.properties.messageId)).toEqual(
      Array.from({ length: 60 - replayed }, (_, i) => `m-${replayed + i}`),
    );
  }, 60_000);
});
