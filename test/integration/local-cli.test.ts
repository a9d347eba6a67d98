import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoOptions } from '../../shared/cli/demo-options.js';
import { redactUrl } from '../../shared/observability/redact.js';
import { AMQP_URL, uniqueName } from '../helpers/broker.js';
import { useTestBroker } from '../helpers/topology.js';
import { type CliRun, callBoomerang } from '../helpers/boomerang-cli.js';
import { tempFunctionsDir, writeQueueFile } from '../fixtures/queue-files.js';

/** Runs `boomerang local <args>` in this process (a hang fails the test at its timeout). */
function local(args: string[], env: Record<string, string>): Promise<CliRun> {
  return callBoomerang(['local', ...args], { env: { PATH: process.env.PATH, LOG_LEVEL: 'silent', ...env } });
}

/** TEST-NET-1 (RFC 5737): no broker there, and not local, so nothing would try to start one. */
const NOWHERE = 'amqp://guest:guest@192.0.2.1:5672';

describe('boomerang local', () => {
  const broker = useTestBroker();

  /** A demo work queue of the test's own, with everything the demo makes on it tracked for deletion. */
  async function ownDemo(label: string, flags: { readonly function?: string } = {}) {
    const queue = `boomerang.demo.${uniqueName(label)}`;
    const env = { AMQP_URL, MAX_RETRIES: '1', BACKOFF_INITIAL_MS: '200' };
    const { ownQueues, ownExchanges } = await demoOptions({ ...flags, queue }, env);
    broker().trackQueue(...ownQueues);
    broker().trackExchange(...ownExchanges);
    return { queue, env, ownQueues, ownExchanges };
  }

  it.each([
    [['--failure-rate', 'abc'], {}, '--failure-rate must be a number'],
    [
      ['--work-queue', 'orders'],
      {},
      "--work-queue orders is not one of the demo's own names (boomerang.demo.*): the demo deletes and recreates orders.parked, orders.parked.notes, orders, orders.delay.1000ms",
    ],
    [['now'], {}, 'unexpected argument "now"'],
    [[], { MAX_RETRIES: 'abc' }, 'MAX_RETRIES'],
  ])('exits 2 with the usage on %j, before connecting', async (args, env, named) => {
    // Act
    const run = await local(args, { AMQP_URL: NOWHERE, ...env });
    // Assess
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(`error: ${named}`);
    expect(run.stderr).toContain('Usage: boomerang local');
    expect(run.stdout).toBe('');
  });

  it('runs on the work queue --work-queue names, and says which queues it resets before it does', async () => {
    // Prepare
    const { queue, env, ownQueues, ownExchanges } = await ownDemo('local');
    // Act
    const run = await local(['--work-queue', queue, '--messages', '3', '--failure-rate', '0', '--interval-ms', '100'], env);
    // Assess
    expect(run.code, run.stderr).toBe(0);
    const reset = run.stdout.indexOf(
      `resetting the demo's queues (deleted and recreated, with whatever they hold): ${ownQueues.join(', ')}; and its delay-path marker exchange ${ownExchanges.join(', ')}`,
    );
    expect(reset).toBeGreaterThanOrEqual(0);
    expect(reset).toBeLessThan(run.stdout.indexOf(`topology applied: ${queue},`));
    expect(run.stdout).toMatch(/published\s+3/);
    expect(await broker().messageCount(queue)).toBe(0);
  });

  it('deletes its own delay-path marker exchange when it resets, and makes it again', async () => {
    // Prepare: the marker as a direct exchange, which apply's fanout declaration would refuse (406) had the reset kept it
    const { queue, env, ownExchanges } = await ownDemo('local-reset');
    const [marker] = ownExchanges;
    await broker().channel.assertExchange(marker as string, 'direct', { durable: true });
    // Act
    const run = await local(['--queue', queue, '--messages', '1', '--failure-rate', '0', '--interval-ms', '100'], env);
    // Assess: the marker is there again, as the fanout apply declares
    expect(run.code, run.stderr).toBe(0);
    await expect(broker().channel.assertExchange(marker as string, 'fanout', { durable: true })).resolves.toBeDefined();
  });

  it('runs the partner-sync queue with --function: its handler PUTs each record to the flaky provider', async () => {
    // Prepare
    const { queue, env } = await ownDemo('local-partner', { function: 'partner-sync' });
    // Act
    const run = await local(['--function', 'partner-sync', '--work-queue', queue, '--messages', '3', '--failure-rate', '0', '--interval-ms', '100'], env);
    // Assess
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('published 3 partner-sync messages');
    // Exit 0 means all 3 settled (delivered, or parked on the provider's 2 % permanent 400s); each was PUT at least once.
    expect(run.stdout).toMatch(/provider requests\s+([3-9]|\d{2,})\s/);
    expect(await broker().messageCount(queue)).toBe(0);
  });

  it("runs the package's own webhooks example in a team's project without one, saying so on stderr", async () => {
    // Prepare: a team's folder (--functions-dir) that declares orders only
    const { queue, env } = await ownDemo('local-team');
    const team = tempFunctionsDir();
    writeQueueFile(team.dir, { template: 'orders', name: 'orders', workQueue: uniqueName('team-orders') });
    try {
      // Act
      const run = await local(['--functions-dir', team.dir, '--work-queue', queue, '--messages', '3', '--failure-rate', '0', '--interval-ms', '100'], env);
      // Assess
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain("declares no webhooks queue: the demo runs the package's own webhooks example (functions/webhooks.ts)");
      expect(run.stdout).toContain('published 3 webhooks messages');
      expect(await broker().messageCount(queue)).toBe(0);
    } finally {
      team.remove();
    }
  });

  it("reports a wrong password at once, with invoke's words, and never starts a rabbitmq-server", { timeout: 15_000 }, async () => {
    // Prepare: a rabbitmq-server first on the PATH that only leaves a mark
    const bin = mkdtempSync(join(tmpdir(), 'fake-rabbit-'));
    const mark = join(bin, 'started');
    writeFileSync(join(bin, 'rabbitmq-server'), `#!/bin/sh\ntouch '${mark}'\n`);
    chmodSync(join(bin, 'rabbitmq-server'), 0o755);
    const url = new URL(AMQP_URL);
    url.password = `wrong-${uniqueName('pw')}`;
    try {
      // Act
      const run = await local(['--messages', '5'], { AMQP_URL: url.toString(), PATH: `${bin}:${process.env.PATH}` });
      // Assess
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain(
        `BrokerConnectionError: Cannot connect to ${redactUrl(url.toString())}: the broker refused the login of user "${url.username}": check the user name and password`,
      );
      expect(run.stdout).not.toContain('starting it');
      expect(existsSync(mark)).toBe(false);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
