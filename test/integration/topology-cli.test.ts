import { describe, expect, it } from 'vitest';
import { type CliRun, callBoomerang } from '../helpers/boomerang-cli.js';

/** Runs `boomerang topology <args>` in this process. */
function topology(args: string[], env: Record<string, string>): Promise<CliRun> {
  return callBoomerang(['topology', ...args], { env: { PATH: process.env.PATH, LOG_LEVEL: 'silent', ...env } });
}

/** TEST-NET-1 (RFC 5737): nothing answers there, so a run that tried to connect would not exit 2. */
const NOWHERE = 'amqp://guest:guest@192.0.2.1:5672';

describe('boomerang topology', () => {
  it.each([
    [['verify', '--work-queue', 'orders'], { MAX_RETRIES: 'abc' }, 'MAX_RETRIES'],
    [['verify'], { IDLE_TIMEOUT_MS: 'abc' }, 'IDLE_TIMEOUT_MS'],
    [['apply'], { RETRY_HEADER: 'x-death' }, 'RETRY_HEADER'],
    [['verify', '--work-queue', 'amq.orders'], {}, 'WORK_QUEUE must not start with "amq."'],
    [['apply', '--function', 'nope'], {}, '--function nope: no such queue; the declared queues are partner-sync, webhooks'],
    [['apply', '--function', 'webhooks', '--work-queue', 'orders'], {}, '--work-queue and --function go separately'],
    [['verify'], { BOOMERANG_FUNCTIONS_DIR: '/nowhere/functions' }, 'The functions folder /nowhere/functions cannot be read (ENOENT)'],
  ])('exits 2 with the usage on a bad environment or flag (%j, %j), before connecting', async (args, env, named) => {
    // Act
    const run = await topology(args, { AMQP_URL: NOWHERE, ...env });

    // Assess
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(named);
    expect(run.stderr).toContain('Usage: boomerang topology');
  });

  it("names on stderr each variable set but replaced by the queue's file, with both values, an invalid one too", async () => {
    // Act: webhooks.ts gives retry.maxRetries 8, retry.initialDelayMs 1000 and batchSize 100
    const run = await topology(['export', '--function', 'webhooks'], {
      AMQP_URL: NOWHERE,
      MAX_RETRIES: '-1',
      BACKOFF_INITIAL_MS: 'abc',
      BATCH_SIZE: '7',
      IDLE_TIMEOUT_MS: '300',
    });
    // Assess: the export still runs with the file's values, and says which variables it did not use
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      'note: MAX_RETRIES=-1 is set but not used: retry.maxRetries in defineQueue("webhooks") is 8 (and -1 would be refused: MAX_RETRIES must be an integer from 0 to 1000; got "-1")',
    );
    expect(run.stderr).toContain(
      'note: BACKOFF_INITIAL_MS=abc is set but not used: retry.initialDelayMs in defineQueue("webhooks") is 1000 (and abc would be refused: BACKOFF_INITIAL_MS must be a positive integer',
    );
    expect(run.stderr).toContain('note: BATCH_SIZE=7 is set but not used: batchSize in defineQueue("webhooks") is 100\n');
    // IDLE_TIMEOUT_MS is environment-only: used, so not named
    expect(run.stderr).not.toContain('IDLE_TIMEOUT_MS');
  });

  it('exports every declared queue in one definitions file, or the one --function names', async () => {
    // Act
    const [all, one] = await Promise.all([
      topology(['export'], { AMQP_URL: NOWHERE }),
      topology(['export', '--function', 'partner-sync'], { AMQP_URL: NOWHERE }),
    ]);
    // Assess
    expect(all.code, all.stderr).toBe(0);
    const workQueues = (run: CliRun): string[] =>
      (JSON.parse(run.stdout) as { queues: { name: string }[] }).queues
        .map((q) => q.name)
        .filter((name) => !/\.(parked|parked\.notes|delay\.\d+ms)$/.test(name));
    expect(workQueues(all)).toEqual(['boomerang.partner-sync', 'boomerang.webhooks']);
    expect(workQueues(one)).toEqual(['boomerang.partner-sync']);
  });
});
