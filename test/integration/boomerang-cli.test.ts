/**
 * `boomerang`, the package's one command: the command list, the version, a command's usage,
 * `--functions-dir`. The list and the version run it as its own process from the source (as `npm run
 * <command>` runs it), the rest in this process. Nothing here connects: `topology export` reads the
 * queue files only.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, callBoomerang, runBoomerang } from '../helpers/boomerang-cli.js';
import { lastJsonLine } from '../helpers/invoke-child.js';
import { uniqueName } from '../helpers/broker.js';
import { tempFunctionsDir, writeQueueFile } from '../fixtures/queue-files.js';

/** TEST-NET-1 (RFC 5737): nothing answers there, so a run that tried to connect would fail. */
const NOWHERE = 'amqp://guest:guest@192.0.2.1:5672';
const COMMANDS = ['topology', 'invoke', 'publish', 'policy', 'parked', 'console', 'local'];
/** Several processes at once on a loaded 2-core machine: a limit, not a measurement. */
const TIMEOUT_MS = 90_000;

/** `boomerang <args>` in this process, in a clean environment plus `env`. */
function boomerang(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return callBoomerang(args, { env: cleanEnv(env) });
}

/** `boomerang <args>` as its own process (node + tsx), in a clean environment. */
function spawned(args: string[]): Promise<CliRun> {
  return runBoomerang(args, { env: cleanEnv({}), timeoutMs: 60_000 });
}

/** A clean environment where nothing answers as the broker, plus `env`. */
function cleanEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, AMQP_URL: NOWHERE, LOG_LEVEL: 'silent', ...env };
}

/** The work queues of an exported definitions file (no parking lot or delay queue). */
function workQueues(run: CliRun): string[] {
  return (JSON.parse(run.stdout) as { queues: { name: string }[] }).queues
    .map((q) => q.name)
    .filter((name) => !/\.(parked|parked\.notes|delay\.\d+ms)$/.test(name));
}

describe('boomerang', () => {
  it('lists every command, one line each, with no argument, help, -h and --help (exit 0)', { timeout: TIMEOUT_MS }, async () => {
    // Act
    const runs = await Promise.all([spawned([]), ...[['help'], ['-h'], ['--help']].map((args) => boomerang(args))]);
    // Assess
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe(runs[0]?.stdout);
      for (const name of COMMANDS) expect(run.stdout).toMatch(new RegExp(`^  ${name} +\\S.+$`, 'm'));
      expect(run.stdout).toContain('--functions-dir <dir>');
      expect(run.stdout).toContain("In Boomerang's own repository, npm run <command> -- <args> does the same.");
    }
  });

  it("prints the package's version", async () => {
    // Prepare
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    // Act
    const run = await spawned(['--version']);
    // Assess
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`${version}\n`);
  });

  it('exits 2 on an unknown command, naming it and listing the commands', async () => {
    // Act
    const run = await boomerang(['frobnicate', '--help']);
    // Assess
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`error: unknown command "frobnicate"; the commands are ${COMMANDS.join(', ')}`);
    expect(run.stderr).toContain('Usage: boomerang <command>');
    expect(run.stdout).toBe('');
  });

  it('answers a mistyped command with the closest one', async () => {
    // Act
    const run = await boomerang(['parkd', 'list']);
    // Assess
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('error: unknown command "parkd"; did you mean parked?');
  });

  it('prints the command list for help --help (exit 0)', async () => {
    // Act
    const [asked, plain] = await Promise.all([boomerang(['help', '--help']), boomerang(['help'])]);
    // Assess
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toBe(plain.stdout);
  });

  it('answers a mistyped option with the closest one and the usage lines only (exit 2)', async () => {
    // Act
    const run = await boomerang(['invoke', 'pull', '--functon', 'orders']);
    // Assess
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('error: unknown option --functon; did you mean --function?');
    expect(run.stderr).toContain('Usage: boomerang invoke');
    expect(run.stderr).toContain('(--help shows every option)');
    expect(run.stderr).not.toContain('Logs go to stderr');
    expect(run.stderr.trim().split('\n').length).toBeLessThanOrEqual(6);
  });

  it.each(COMMANDS)('prints the usage of %s for <command> --help and help <command> (exit 0)', { timeout: TIMEOUT_MS }, async (command) => {
    // Act
    const [own, asked] = await Promise.all([boomerang([command, '--help']), boomerang(['help', command])]);
    // Assess
    expect(own.code, own.stderr).toBe(0);
    expect(own.stdout).toContain(`Usage: boomerang ${command}`);
    expect(own.stdout).toContain(`npm run ${command} -- <args> does the same`);
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toBe(own.stdout);
  });
});

describe('boomerang --functions-dir', () => {
  let functions: ReturnType<typeof tempFunctionsDir>;
  const workQueue = uniqueName('fdir-orders');

  beforeAll(() => {
    functions = tempFunctionsDir();
    writeQueueFile(functions.dir, { template: 'orders', name: 'orders', workQueue });
  });
  afterAll(() => functions.remove());

  it.each([
    ['before the command', (dir: string) => ['--functions-dir', dir, 'topology', 'export']],
    ['after the command, with =', (dir: string) => ['topology', 'export', `--functions-dir=${dir}`]],
    ['between the command and its words', (dir: string) => ['topology', '--functions-dir', dir, 'export', '--function', 'orders']],
  ])('reads the queue files of that folder, %s, over BOOMERANG_FUNCTIONS_DIR', { timeout: TIMEOUT_MS }, async (_where, args) => {
    // Act: the variable names a folder that does not exist
    const run = await boomerang(args(functions.dir), { BOOMERANG_FUNCTIONS_DIR: '/nowhere/functions' });
    // Assess
    expect(run.code, run.stderr).toBe(0);
    expect(workQueues(run)).toEqual([workQueue]);
  });

  it('prints the summary line, with the error, on stdout when invoke fails before taking anything (exit 1)', async () => {
    // Act: nothing listens on port 1
    const run = await boomerang(['invoke', 'pull', '--functions-dir', functions.dir, '--budget-ms', '2000'], { AMQP_URL: 'amqp://guest:guest@127.0.0.1:1' });
    // Assess
    expect(run.code).toBe(1);
    const summary = lastJsonLine(run.stdout) ?? {};
    expect(summary).toMatchObject({ received: 0, stoppedBecause: 'connect-failed', errorName: 'BrokerConnectionError' });
    expect(String(summary.error)).toContain('nothing listens on 127.0.0.1:1');
    expect(run.stderr).toContain('BrokerConnectionError: ');
  });

  it('leaves BOOMERANG_FUNCTIONS_DIR in force without the flag', async () => {
    // Act
    const run = await boomerang(['topology', 'export'], { BOOMERANG_FUNCTIONS_DIR: functions.dir });
    // Assess
    expect(run.code, run.stderr).toBe(0);
    expect(workQueues(run)).toEqual([workQueue]);
  });

  it('exits 2 without a value, with the command list', async () => {
    // Act
    const run = await boomerang(['topology', 'export', '--functions-dir']);
    // Assess
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('error: --functions-dir needs a folder: --functions-dir <dir>');
    expect(run.stderr).toContain('Usage: boomerang <command>');
    expect(run.stdout).toBe('');
  });
});
