import { mkdirSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../shared/errors.js';
import { type DemoFlags, demoOptions, demoQueueName } from '../../shared/cli/demo-options.js';
import { PACKAGE_EXAMPLES_DIR } from '../../shared/cli/demo-queue.js';
import { defineQueue } from '../../shared/queues/define-queue.js';
import { tempFunctionsDir, writeQueueFile } from '../fixtures/queue-files.js';

const ENV = { AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672' };

describe('demoOptions', () => {
  it('has the documented defaults, and resets only the demo queue, its parking lot and park notes, its delay queues and its pause marker', async () => {
    // Act
    const options = await demoOptions({}, ENV);
    // Assess: a name of this user on this machine
    const own = demoQueueName(userInfo().username, hostname());
    expect(options).toMatchObject({ messages: 300, failureRate: 0.4, intervalMs: 2000, demoOwned: true });
    expect(options.config).toMatchObject({ workQueue: own, parkingQueue: `${own}.parked` });
    const delayQueues = options.ownQueues.filter((name) => name.startsWith(`${own}.delay.`));
    expect(delayQueues.length).toBeGreaterThan(0);
    expect([...options.ownQueues].sort()).toEqual([own, `${own}.parked`, `${own}.parked.notes`, `${own}.pause`, ...delayQueues].sort());
    expect(options.ownExchanges).toEqual([options.plan.marker]);
    expect(options.ownExchanges[0]).toMatch(new RegExp(`^${own.replaceAll('.', '\\.')}\\.delay-path\\.[0-9a-f]{16}$`));
  });

  it('takes the work queue from --work-queue and never a parking lot from the environment', async () => {
    // Act
    const options = await demoOptions({ queue: 'boomerang.demo.alice' }, { ...ENV, WORK_QUEUE: 'orders', PARKING_QUEUE: 'orders.parked' });
    // Assess
    expect(options.config).toMatchObject({ workQueue: 'boomerang.demo.alice', parkingQueue: 'boomerang.demo.alice.parked' });
    expect(options.ownQueues.every((name) => name.startsWith('boomerang.demo.alice'))).toBe(true);
  });

  it("takes any work queue, saying it is not one of the demo's own names", async () => {
    // Act
    const [foreign, old] = await Promise.all([demoOptions({ queue: 'orders' }, ENV), demoOptions({ queue: 'boomerang.demo' }, ENV)]);
    // Assess
    expect(foreign).toMatchObject({ demoOwned: false, config: { workQueue: 'orders', parkingQueue: 'orders.parked' } });
    expect(old.demoOwned).toBe(true);
  });

  it.each([
    ['alice', 'laptop-7.corp.example', 'boomerang.demo.alice-laptop-7'],
    ['Bob Smith', 'CI_Runner', 'boomerang.demo.bob-smith-ci-runner'],
    ['', 'node-svc', 'boomerang.demo.node-svc'],
    ['', '', 'boomerang.demo.me'],
    ['a'.repeat(60), 'h', `boomerang.demo.${'a'.repeat(40)}`],
  ])('names the demo queue of %j on %j %s', (user, host, name) => {
    expect(demoQueueName(user, host)).toBe(name);
  });

  it("keeps exact mode's shared level queues", async () => {
    // Prepare: a declared queue in exact mode
    const { queue } = defineQueue({ name: 'webhooks', handler: async () => undefined, workQueue: 'orders', advanced: { delayMode: 'exact' } });
    // Act
    const options = await demoOptions({ queue: 'boomerang.demo' }, ENV, [{ ...queue, file: 'functions/webhooks.ts' }]);
    // Assess
    expect([...options.ownQueues].sort()).toEqual(['boomerang.demo', 'boomerang.demo.parked', 'boomerang.demo.parked.notes', 'boomerang.demo.pause']);
    expect(options.ownExchanges).toEqual([options.plan.marker]);
    expect(options.plan.exchanges.length).toBeGreaterThan(0);
  });

  it('runs the declared queue --function names, with its handler and options, on the demo queues with demo-sized retries', async () => {
    // Act
    const [webhooks, partner] = await Promise.all([demoOptions({}, ENV), demoOptions({ function: 'partner-sync', queue: 'boomerang.demo' }, ENV)]);
    // Assess
    expect([webhooks.name, partner.name]).toEqual(['webhooks', 'partner-sync']);
    expect(partner.config).toMatchObject({ workQueue: 'boomerang.demo', batchSize: 50, concurrency: 4, policy: { maxRetries: 4, initialDelayMs: 1000 } });
    expect(partner.config.rules.map((r) => r.match.errorName)).toEqual(['PartnerConflictError', 'PartnerRateLimitedError', 'PartnerUnavailableError']);
    // A rate limit pauses the partner-sync queue (its rule says so), the other two only delay their message.
    expect(partner.config.rules.map((r) => r.pauseQueue)).toEqual([undefined, true, undefined]);
    // The rules keep whether they retry, with the demo's timing: a run settles in a minute, not a day.
    expect(partner.config.rules.map((r) => [r.retry, r.policy.maxRetries, r.policy.maxDelayMs])).toEqual([
      [false, 4, partner.config.policy.maxDelayMs],
      [true, 4, partner.config.policy.maxDelayMs],
      [true, 4, partner.config.policy.maxDelayMs],
    ]);
    expect(partner.feed.message(3, 'http://p')).toMatchObject({ id: 'record-3' });
    expect(partner.feed.env('http://p')).toEqual({ PARTNER_API_URL: 'http://p' });
  });

  it.each<[string, DemoFlags, Record<string, string>, string]>([
    ['a failure rate that is not a number', { 'failure-rate': 'abc' }, {}, '--failure-rate must be a number from 0 to 0.98; got "abc"'],
    ['a failure rate above what the permanent failures leave', { 'failure-rate': '0.99' }, {}, '--failure-rate must be a number from 0 to 0.98; got "0.99"'],
    ['a negative failure rate', { 'failure-rate': '-0.1' }, {}, '--failure-rate'],
    ['zero messages', { messages: '0' }, {}, '--messages must be a whole number from 1 to 100000'],
    ['an interval too short', { 'interval-ms': '10' }, {}, '--interval-ms'],
    ['a bad environment value', {}, { MAX_RETRIES: 'abc' }, 'MAX_RETRIES'],
    ['an unknown queue', { function: 'nope' }, {}, '--function nope: no such queue; the declared queues are partner-sync, webhooks'],
  ])('refuses %s with a usage error that names it', async (_what, flags, env, message) => {
    // Act
    const result = demoOptions(flags, { ...ENV, ...env });
    // Assess
    await expect(result).rejects.toThrow(UsageError);
    await expect(result).rejects.toThrow(message);
  });

  it.each([
    ['0', 0],
    ['0.4', 0.4],
    ['.5', 0.5],
    ['0.98', 0.98],
  ])('accepts --failure-rate %s', async (raw, expected) => {
    expect((await demoOptions({ 'failure-rate': raw }, ENV)).failureRate).toBe(expected);
  });
});

describe("demoOptions in a team's project", () => {
  let team: ReturnType<typeof tempFunctionsDir>;
  let webhooksTeam: ReturnType<typeof tempFunctionsDir>;
  const shown = (dir: string): string => relative(process.cwd(), dir);

  beforeAll(() => {
    team = tempFunctionsDir();
    writeQueueFile(team.dir, { template: 'orders', name: 'orders', workQueue: 'team-orders' });
    webhooksTeam = tempFunctionsDir();
    writeQueueFile(webhooksTeam.dir, { template: 'orders', name: 'webhooks', workQueue: 'team-webhooks' });
  });
  afterAll(() => {
    team.remove();
    webhooksTeam.remove();
  });

  it("runs the package's own example when the team's folder declares no webhooks queue, and says so", async () => {
    // Act
    const options = await demoOptions({ queue: 'boomerang.demo' }, { ...ENV, BOOMERANG_FUNCTIONS_DIR: team.dir });
    // Assess
    expect(options.name).toBe('webhooks');
    expect(options.config.workQueue).toBe('boomerang.demo');
    expect(options.notice).toBe(
      `note: ${shown(team.dir)}/ declares no webhooks queue: the demo runs the package's own webhooks example (${shown(join(PACKAGE_EXAMPLES_DIR, 'webhooks.ts'))})`,
    );
  });

  it.each([
    ['does not exist', (): string => join(team.dir, 'nowhere')],
    [
      'declares no queue',
      (): string => {
        const dir = join(team.dir, 'empty');
        mkdirSync(dir, { recursive: true });
        return dir;
      },
    ],
  ])("runs the package's example of --function when the folder %s", async (why, dir) => {
    // Act
    const options = await demoOptions({ function: 'partner-sync' }, { ...ENV, BOOMERANG_FUNCTIONS_DIR: dir() });
    // Assess
    expect(options.name).toBe('partner-sync');
    expect(options.notice).toContain(`${why}: the demo runs the package's own partner-sync example (${shown(join(PACKAGE_EXAMPLES_DIR, 'partner-sync.ts'))})`);
  });

  it('keeps running a webhooks queue the team declares, without a note', async () => {
    // Act
    const options = await demoOptions({ queue: 'boomerang.demo' }, { ...ENV, BOOMERANG_FUNCTIONS_DIR: webhooksTeam.dir });
    // Assess: the team's file (orders.ts.template: 2 retries from 200 ms, batch of 20), on the demo's queues
    expect(options.notice).toBeUndefined();
    expect(options.config).toMatchObject({ workQueue: 'boomerang.demo', batchSize: 20 });
  });

  it.each<[string, DemoFlags, string]>([
    [
      'a queue the team declares but the demo cannot feed',
      { function: 'orders' },
      '--function orders: the demo feeds webhooks and partner-sync only (it knows their messages); run yours with boomerang invoke pull --function orders',
    ],
    ['a queue neither declares', { function: 'nope' }, '--function nope: no such queue; the declared queues are orders'],
  ])('refuses %s', async (_what, flags, message) => {
    await expect(demoOptions(flags, { ...ENV, BOOMERANG_FUNCTIONS_DIR: team.dir })).rejects.toThrow(new UsageError(message));
  });

  it('refuses a queue the demo does not know when there is no folder, naming the ones it runs', async () => {
    await expect(demoOptions({ function: 'nope' }, { ...ENV, BOOMERANG_FUNCTIONS_DIR: join(team.dir, 'nowhere') })).rejects.toThrow(
      new UsageError(
        '--function nope: the demo feeds webhooks and partner-sync only (it knows their messages); run yours with boomerang invoke pull --function nope',
      ),
    );
  });
});
