import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { AMQP_URL, uniqueName } from '../helpers/broker.js';
import { setUpTopology, testConfig } from '../helpers/engine.js';
import { useTestBroker } from '../helpers/topology.js';
import { type CliRun, callBoomerang, runBoomerang } from '../helpers/boomerang-cli.js';
import { eventFor, fixtureMessages } from '../fixtures/events.js';

const testBroker = useTestBroker();
/** The retry policy of both the test's topology and the CLI process: their delay queues must match. */
const POLICY = { MAX_RETRIES: '2', BACKOFF_INITIAL_MS: '200', BACKOFF_MULTIPLIER: '2', BACKOFF_MAX_MS: '400', BACKOFF_JITTER: '0' };

/** Runs `boomerang invoke <args>` in this process, with `env` on top of a clean environment. */
function invoke(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return callBoomerang(['invoke', ...args], invokeOptions(env));
}

/** A clean environment with the test broker, `env` on top. */
function invokeOptions(env: Record<string, string>): { env: NodeJS.ProcessEnv } {
  return { env: { PATH: process.env.PATH, AMQP_URL, LOG_LEVEL: 'silent', ...env } };
}

describe('boomerang invoke event', () => {
  it('runs the event function on an event file against the local broker and prints the summary last (the real binary, node + tsx)', async () => {
    // Prepare
    const broker = testBroker();
    const config = testConfig({ WORK_QUEUE: uniqueName('cli'), ...POLICY });
    await setUpTopology(broker, config);
    const dir = await mkdtemp(join(tmpdir(), 'boomerang-event-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'event.json');
    await writeFile(file, JSON.stringify(eventFor({ [config.workQueue]: fixtureMessages('local') })));
    // Act
    const run = await runBoomerang(
      ['invoke', 'event', '--event', file, '--handler', 'shared/examples/webhooks/webhook-delivery.ts', '--work-queue', config.workQueue],
      invokeOptions(POLICY),
    );
    // Assess
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim().split('\n').at(-1) as string)).toMatchObject({ received: 2, retried: 1, parked: 1 });
  });

  it('says what is missing and exits 2 without --event; --help names both functions', async () => {
    // Act
    const [missing, help] = await Promise.all([invoke(['event', '--function', 'webhooks']), invoke(['--help'])]);
    // Assess
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('error: event needs its event: --event <file.json>, or --sample for one made here');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('boomerang invoke pull  --function <name>');
    expect(help.stdout).toContain('boomerang invoke event --function <name> (--event <file.json> | --sample');
  });
});

describe('boomerang invoke: variables a queue file replaces', () => {
  it('names each on stderr with both values, an invalid one too, before it connects', async () => {
    // Act: webhooks.ts gives retry.maxRetries 8; nothing listens on port 1, so the invocation fails after the note
    const run = await invoke(['pull', '--function', 'webhooks'], { AMQP_URL: 'amqp://guest:guest@127.0.0.1:1', CONNECT_TIMEOUT_MS: '500', MAX_RETRIES: '-1' });
    // Assess
    expect(run.stderr).toContain('note: MAX_RETRIES=-1 is set but not used: retry.maxRetries in defineQueue("webhooks") is 8 (and -1 would be refused');
    expect(run.code).toBe(1);
  });
});

describe('boomerang invoke: bad input', () => {
  it.each([
    ['a bad environment value', ['pull', '--function', 'webhooks'], { IDLE_TIMEOUT_MS: 'abc' }, 'IDLE_TIMEOUT_MS'],
    ['no --function with two declared queues', ['pull'], {}, 'say which queue: --function <name>; the declared queues are partner-sync, webhooks'],
    ['an unknown --function', ['pull', '--function', 'nope'], {}, '--function nope: no such queue; the declared queues are partner-sync, webhooks'],
    ['--work-queue without --handler', ['pull', '--function', 'webhooks', '--work-queue', 'orders'], {}, '--work-queue goes with --handler'],
    [
      'a bad queue name',
      ['pull', '--handler', 'shared/examples/webhooks/webhook-delivery.ts', '--work-queue', 'amq.mine'],
      {},
      'WORK_QUEUE must not start with "amq."',
    ],
    ['a missing --handler file', ['pull', '--handler', 'no/such/handler.ts'], {}, '--handler no/such/handler.ts: no such file'],
    ['a missing --event file', ['event', '--function', 'webhooks', '--event', 'no/such/event.json'], {}, '--event no/such/event.json: cannot read it (ENOENT)'],
    ['an --event file that is not JSON', ['event', '--function', 'webhooks', '--event', 'README.md'], {}, '--event README.md is not valid JSON'],
  ])('exits 2 with the usage on %s, before connecting', async (_what, args, env, named) => {
    // Act
    const run = await invoke(args, { ...env, AMQP_URL: 'amqp://guest:guest@127.0.0.1:1' });
    // Assess
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(`error: ${named}`);
    expect(run.stderr).toContain('Usage: boomerang invoke');
  });
});
