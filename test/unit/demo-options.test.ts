import { describe, expect, it } from 'vitest';
import { UsageError } from '../../shared/errors.js';
import { type DemoFlags, demoOptions } from '../../shared/cli/demo-options.js';
import { defineQueue } from '../../shared/queues/define-queue.js';

const ENV = { AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672' };

describe('demoOptions', () => {
  it('has the documented defaults, and resets only the demo queue, its parking lot and its delay queues', async () => {
    // Act
    const options = await demoOptions({}, ENV);
    // Assess
    expect(options).toMatchObject({ messages: 300, failureRate: 0.4, intervalMs: 2000 });
    expect(options.config).toMatchObject({ workQueue: 'boomerang.demo', parkingQueue: 'boomerang.demo.parked' });
    const delayQueues = options.ownQueues.filter((name) => /^boomerang\.demo\.delay\.\d+ms$/.test(name));
    expect(delayQueues.length).toBeGreaterThan(0);
    expect([...options.ownQueues].sort()).toEqual(['boomerang.demo', 'boomerang.demo.parked', ...delayQueues].sort());
    expect(options.ownExchanges).toEqual([options.plan.marker]);
    expect(options.ownExchanges[0]).toMatch(/^boomerang\.demo\.delay-path\.[0-9a-f]{16}$/);
  });

  it('takes the work queue from --work-queue and never a parking lot from the environment', async () => {
    // Act
    const options = await demoOptions({ queue: 'boomerang.demo.alice' }, { ...ENV, WORK_QUEUE: 'orders', PARKING_QUEUE: 'orders.parked' });
    // Assess
    expect(options.config).toMatchObject({ workQueue: 'boomerang.demo.alice', parkingQueue: 'boomerang.demo.alice.parked' });
    expect(options.ownQueues.every((name) => name.startsWith('boomerang.demo.alice'))).toBe(true);
  });

  it('keeps exact mode\'s shared level queues', async () => {
    // Prepare: a declared queue in exact mode
    const { queue } = defineQueue({ name: 'webhooks', handler: async () => undefined, workQueue: 'orders', delayMode: 'exact' });
    // Act
    const options = await demoOptions({}, ENV, [{ ...queue, file: 'functions/webhooks.ts' }]);
    // Assess
    expect([...options.ownQueues].sort()).toEqual(['boomerang.demo', 'boomerang.demo.parked']);
    expect(options.ownExchanges).toEqual([options.plan.marker]);
    expect(options.plan.exchanges.length).toBeGreaterThan(0);
  });

  it('runs the declared queue --function names, with its handler and options, on the demo queues with demo-sized retries', async () => {
    // Act
    const [webhooks, partner] = await Promise.all([demoOptions({}, ENV), demoOptions({ function: 'partner-sync' }, ENV)]);
    // Assess
    expect([webhooks.name, partner.name]).toEqual(['webhooks', 'partner-sync']);
    expect(partner.config).toMatchObject({ workQueue: 'boomerang.demo', batchSize: 50, concurrency: 4, policy: { maxRetries: 4, initialDelayMs: 1000 } });
    expect(partner.config.rules.map((r) => r.match.errorName)).toEqual(['PartnerConflictError', 'PartnerRateLimitedError', 'PartnerUnavailableError']);
    // The rules keep whether they retry, with the demo's timing: a run settles in a minute, not a day.
    expect(partner.config.rules.map((r) => [r.retry, r.policy.maxRetries, r.policy.maxDelayMs])).toEqual([[false, 4, partner.config.policy.maxDelayMs], [true, 4, partner.config.policy.maxDelayMs], [true, 4, partner.config.policy.maxDelayMs]]);
    expect(partner.feed.message(3, 'http://p')).toMatchObject({ id: 'record-3' });
    expect(partner.feed.env('http://p')).toEqual({ PARTNER_API_URL: 'http://p' });
  });

  it.each<[string, DemoFlags, Record<string, string>, string]>([
    ['a failure rate that is not a number', { 'failure-rate': 'abc' }, {}, '--failure-rate must be a number from 0 to 0.98; got "abc"'],
    ['a failure rate above what the permanent failures leave', { 'failure-rate': '0.99' }, {}, '--failure-rate must be a number from 0 to 0.98; got "0.99"'],
    ['a negative failure rate', { 'failure-rate': '-0.1' }, {}, '--failure-rate'],
    ['zero messages', { messages: '0' }, {}, '--messages must be a whole number from 1 to 100000'],
    ['an interval too short', { 'interval-ms': '10' }, {}, '--interval-ms'],
    ['a queue that is not the demo\'s', { queue: 'orders' }, {}, '--work-queue must start with "boomerang.demo"'],
    ['a bad environment value', {}, { MAX_RETRIES: 'abc' }, 'MAX_RETRIES'],
    ['an unknown queue', { function: 'nope' }, {}, '--function nope: no such queue; the declared queues are partner-sync, webhooks'],
  ])('refuses %s with a usage error that names it', async (_what, flags, env, message) => {
    // Act
    const result = demoOptions(flags, { ...ENV, ...env });
    // Assess
    await expect(result).rejects.toThrow(UsageError);
    await expect(result).rejects.toThrow(message);
  });

  it.each([['0', 0], ['0.4', 0.4], ['.5', 0.5], ['0.98', 0.98]])('accepts --failure-rate %s', async (raw, expected) => {
    expect((await demoOptions({ 'failure-rate': raw }, ENV)).failureRate).toBe(expected);
  });
});
