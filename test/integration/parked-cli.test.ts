import { spawn } from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';
import { BoomerangHeader } from '../../shared/message/headers.js';
import { readerLockQueue } from '../../shared/parked/reader-lock.js';
import { AMQP_URL, type TestBroker, uniqueName } from '../helpers/broker.js';
import { useTestBroker } from '../helpers/topology.js';
import { answerOnTerminal, boomerangArgs, type CliRun, callBoomerang } from '../helpers/boomerang-cli.js';
import { tempFunctionsDir, writeQueueFile } from '../fixtures/queue-files.js';

/**
 * Runs `boomerang parked <args>` in this process, stdin not a terminal, as a script would; the tests
 * of what only a process shows (a terminal, a closed pipe, a kill) spawn the real binary.
 */
function parkedCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  return callBoomerang(['parked', ...args], { env: { ...process.env, AMQP_URL, ...env } });
}

/** A work queue and its parking lot (quorum), with `count` parked messages m-0, m-1... pointing back at it. */
async function parkedMessages(broker: TestBroker, count: number): Promise<{ work: string; parked: string }> {
  const work = uniqueName('work');
  const parked = `${work}.parked`;
  broker.trackQueue(work, parked);
  const channel = await broker.connection.createConfirmChannel();
  for (const queue of [work, parked]) await channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  for (let i = 0; i < count; i++) {
    channel.sendToQueue(parked, Buffer.from(`{"n":${i}}`), {
      persistent: true,
      messageId: `m-${i}`,
      headers: { [BoomerangHeader.sourceQueue]: work, [BoomerangHeader.errorName]: 'PartnerDown', [BoomerangHeader.parkedAt]: new Date().toISOString() },
    });
  }
  await channel.waitForConfirms();
  await channel.close();
  return { work, parked };
}

describe('boomerang parked', () => {
  const broker = useTestBroker();

  /** The lot holds m-0 ... m-(count-1), once each, in order (the drain takes them off). */
  async function expectLotIntact(parked: string, count: number): Promise<void> {
    const messages = await broker().drain(parked, count, 15_000);
    expect(await broker().channel.get(parked, { noAck: true })).toBe(false);
    expect(messages.map((m) => String(m.properties.messageId))).toEqual(Array.from({ length: count }, (_, i) => `m-${i}`));
  }

  it('lists through the CLI and exits 0', async () => {
    // Prepare
    const { work } = await parkedMessages(broker(), 3);
    // Act
    const { code, stdout, stderr } = await parkedCli(['list'], { WORK_QUEUE: work });
    // Assess
    expect(code).toBe(0);
    expect(stdout.split('\n').filter((l) => l.startsWith('m-'))).toHaveLength(3);
    expect(stderr).toContain('list: 3/3 read · 3 matched');
  });

  it.each([
    [['list', '--bogus'], 'unknown option --bogus'],
    [['list', '--older-than', 'soon'], '--older-than'],
    [['replay', '--rate', 'fast'], '--rate'],
    [['replay', '--limit', '0'], '--limit'],
    [['show'], 'show <messageId>'],
    [['frobnicate'], 'unknown command'],
  ])('exits 2 on bad input %j, naming what is wrong', async (args, named) => {
    // Act
    const { code, stderr } = await parkedCli(args, { WORK_QUEUE: 'unused' });
    // Assess
    expect(code).toBe(2);
    expect(stderr).toContain(named);
    expect(stderr).toContain('Usage:');
  });

  it('reads the lot of the one declared queue without a flag, as invoke and topology pick their queue; with several, names them and the flag', async () => {
    // Prepare: a functions folder with one queue, whose lot holds 2 messages
    const { work } = await parkedMessages(broker(), 2);
    const functions = tempFunctionsDir();
    try {
      writeQueueFile(functions.dir, { template: 'orders', name: 'orders', workQueue: work });
      const env = { AMQP_URL, PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent' };
      // Act
      const one = await callBoomerang(['parked', 'list', '--functions-dir', functions.dir], { env });
      writeQueueFile(functions.dir, { template: 'orders', name: 'invoices', workQueue: uniqueName('invoices') });
      const two = await callBoomerang(['parked', 'list', '--functions-dir', functions.dir], { env });
      // Assess
      expect(one.code, one.stderr).toBe(0);
      expect(one.stdout.split('\n').filter((l) => l.startsWith('m-'))).toHaveLength(2);
      expect(two.code).toBe(2);
      expect(two.stderr).toContain('error: say which parking lot: --function <name>; the declared queues are');
      expect(two.stderr).not.toContain('--queue');
    } finally {
      functions.remove();
    }
  });

  it('has --help on every command', async () => {
    for (const command of ['list', 'show', 'replay', 'purge']) {
      const { code, stdout } = await parkedCli([command, '--help'], {});
      expect(code).toBe(0);
      expect(stdout).toContain(`Usage: boomerang parked ${command}`);
    }
  });

  it('exits 2 with the usage on a bad environment value, naming the variable', async () => {
    // Act
    const { code, stderr } = await parkedCli(['list'], { WORK_QUEUE: 'orders', PARKING_QUEUE: 'amq.parked' });
    // Assess
    expect(code).toBe(2);
    expect(stderr).toContain('error: PARKING_QUEUE must not start with "amq."');
    expect(stderr).toContain('Usage: boomerang parked list');
  });

  it('on a terminal, counts what purge would delete before it asks, then deletes it on a yes', async () => {
    // Prepare: 3 of the 5 say PartnerDown
    const { work, parked } = await parkedMessages(broker(), 5);
    const channel = await broker().connection.createConfirmChannel();
    for (const id of ['t-0', 't-1'])
      channel.sendToQueue(parked, Buffer.from('{}'), { persistent: true, messageId: id, headers: { [BoomerangHeader.errorName]: 'Timeout' } });
    await channel.waitForConfirms();
    await channel.close();
    // Act: script(1) gives the command a terminal; the test answers the question
    const { code, screen } = await answerOnTerminal(['parked', 'purge', '--error', 'Timeout'], { ...process.env, AMQP_URL, WORK_QUEUE: work }, 'y');
    // Assess
    expect(code, screen).toBe(0);
    expect(screen).toContain(`Delete 2 of the 7 parked messages in ${parked} (error is Timeout)? This cannot be undone. [y/N]`);
    expect(screen).toContain('deleted 2');
    await expectLotIntact(parked, 5);
  });

  it('refuses to purge without --yes when stdin is not a terminal, and deletes nothing', async () => {
    // Prepare
    const { work, parked } = await parkedMessages(broker(), 2);
    // Act
    const { code, stderr } = await parkedCli(['purge'], { WORK_QUEUE: work });
    // Assess
    expect(code).toBe(2);
    expect(stderr).toContain('pass --yes');
    expect(await broker().messageCount(parked)).toBe(2);
  });

  it('exits 1 and says so when the parking queue does not exist, and leaves no lock queue behind', async () => {
    // Prepare
    const work = uniqueName('nothing');
    // Act
    const { code, stderr } = await parkedCli(['list'], { WORK_QUEUE: work });
    // Assess
    expect(code).toBe(1);
    expect(stderr).toContain('there is no queue');
    expect(stderr).toContain('--function <name> or --parking-queue <name>');
    expect(await broker().exists('queue', readerLockQueue(`${work}.parked`))).toBe(false);
  });

  it('carries on to the end when its reader goes away (| head), so the lot keeps exactly its messages, in order', async () => {
    // Prepare
    const { work, parked } = await parkedMessages(broker(), 500);
    const child = spawn(process.execPath, boomerangArgs(['parked', 'list', '--json']), {
      env: { ...process.env, AMQP_URL, WORK_QUEUE: work },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // Act: the reader takes the first rows and goes, as head -1 does
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise((resolve) => child.once('close', resolve));
    // Assess
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('stdout was closed: reading on to the end');
    expect(stderr).toContain('list: 500/500 read');
    await expectLotIntact(parked, 500);
  });

  it('survives its stderr going away (2>&1 | true) without duplicating what it held', async () => {
    // Prepare
    const { work, parked } = await parkedMessages(broker(), 100);
    const child = spawn(process.execPath, boomerangArgs(['parked', 'list']), {
      env: { ...process.env, AMQP_URL, WORK_QUEUE: work },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    // Act
    child.stderr.destroy();
    const code = await new Promise((resolve) => child.once('close', resolve));
    // Assess
    expect(code).toBe(0);
    await expectLotIntact(parked, 100);
  });

  it('killed (SIGKILL) in the middle of a replay, duplicates at most one message and loses none', async () => {
    // Prepare
    const { work, parked } = await parkedMessages(broker(), 40);
    const child = spawn(process.execPath, boomerangArgs(['parked', 'replay', '--rate', '20/s']), {
      env: { ...process.env, AMQP_URL, WORK_QUEUE: work },
      stdio: 'ignore',
    });
    // Act: kill it once some, but not all, were replayed (at 20/s, 40 take 2 s; starting node and tsx on a loaded machine took over 5 s)
    await broker().holds(work, 5);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    // The broker gives the unacked message back once it sees the connection gone.
    await vi.waitFor(
      async () =>
        expect((await broker().messageCount(work)) + (await broker().messageCount(parked)), `messages in ${work} and ${parked}`).toBeGreaterThanOrEqual(40),
      { timeout: 5000, interval: 50 },
    );
    // Assess
    const replayed = await broker().drain(work, await broker().messageCount(work));
    const stillParked = await broker().drain(parked, await broker().messageCount(parked));
    const ids = [...replayed, ...stillParked].map((m) => String(m.properties.messageId));
    expect(replayed.length).toBeGreaterThanOrEqual(5);
    expect(stillParked.length).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(40);
    expect(ids.length - 40).toBeLessThanOrEqual(1);
  });
});
