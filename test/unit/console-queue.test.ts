import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { consoleQueuesFromConfig, consoleQueuesFromDeclared, shellWord } from '../../shared/console/console-queue.js';
import { QueueLock } from '../../shared/console/queue-lock.js';
import { defineQueue } from '../../shared/queues/define-queue.js';

/** A declared queue, as a file in functions/ would declare it. */
const declared = (options: Omit<Parameters<typeof defineQueue>[0], 'handler'>) => defineQueue({ ...options, handler: async () => undefined }).queue;

describe('consoleQueuesFromDeclared', () => {
  it('shows each declared queue under its name, with the work queue, parking lot and delay queues of its own config', () => {
    // Prepare
    const queues = [
      declared({ name: 'orders', workQueue: 'shop.orders', parkingQueue: 'shop.orders.dead', advanced: { delayMode: 'tiers' } }),
      declared({
        name: 'invoices',
        workQueue: 'shop.invoices',
        advanced: { delayMode: 'exact' },
        retry: { maxRetries: 3, initialDelayMs: 1000, maxDelayMs: 8000 },
      }),
    ];
    // Act
    const [orders, invoices] = consoleQueuesFromDeclared(queues, {});
    // Assess
    expect(orders).toMatchObject({ name: 'orders', workQueue: 'shop.orders', parkingQueue: 'shop.orders.dead' });
    expect(orders?.delayQueues.length).toBeGreaterThan(0);
    expect(orders?.delayQueues.every((name) => name.startsWith('shop.orders.delay.'))).toBe(true);
    expect(invoices).toMatchObject({ name: 'invoices', workQueue: 'shop.invoices', parkingQueue: 'shop.invoices.parked' });
    expect(invoices?.delayQueues).not.toEqual(orders?.delayQueues);
    expect(invoices?.delayQueues.length).toBeGreaterThan(0);
  });

  it("names the command that declares a declared queue's topology", () => {
    const [queue] = consoleQueuesFromDeclared([declared({ name: 'partner-sync', workQueue: 'boomerang.partner-sync' })], {});
    expect(queue?.applyCommand).toBe('boomerang topology apply --function partner-sync');
  });

  it('reads what the file leaves to the environment: PARKING_QUEUE', () => {
    // Act
    const [queue] = consoleQueuesFromDeclared([declared({ name: 'orders', workQueue: 'orders' })], { PARKING_QUEUE: 'orders.lot' });
    // Assess
    expect(queue?.parkingQueue).toBe('orders.lot');
  });

  it("refuses an environment value the queue's config refuses, with a ConfigError naming it", () => {
    // Act + Assess
    expect(() => consoleQueuesFromDeclared([declared({ name: 'orders', workQueue: 'orders' })], { MAX_RETRIES: 'many' })).toThrow(
      expect.objectContaining({ name: 'ConfigError', message: expect.stringContaining('MAX_RETRIES') }),
    );
  });
});

describe('consoleQueuesFromConfig', () => {
  it('takes WORK_QUEUE and PARKING_QUEUE when no queue is named', () => {
    const [queue] = consoleQueuesFromConfig(loadConfig({ WORK_QUEUE: 'orders', PARKING_QUEUE: 'orders.dead' }));
    expect(queue).toMatchObject({ name: 'orders', workQueue: 'orders', parkingQueue: 'orders.dead' });
    expect(queue?.delayQueues.length).toBeGreaterThan(0);
    expect(queue?.delayQueues.every((name) => name.startsWith('orders.delay.'))).toBe(true);
  });

  it('gives each named queue its default parking lot, once per name', () => {
    const queues = consoleQueuesFromConfig(loadConfig({ WORK_QUEUE: 'orders' }), ['invoices', 'orders', 'invoices']);
    expect(queues.map((q) => [q.workQueue, q.parkingQueue])).toEqual([
      ['invoices', 'invoices.parked'],
      ['orders', 'orders.parked'],
    ]);
  });

  it('names the apply command with the parking lot in its environment, as --queue sees it', () => {
    const queues = consoleQueuesFromConfig(loadConfig({ WORK_QUEUE: 'orders', PARKING_QUEUE: 'orders.dead' }), ['orders', 'invoices']);
    expect(queues.map((q) => q.applyCommand)).toEqual([
      'PARKING_QUEUE=orders.dead boomerang topology apply --work-queue orders',
      'PARKING_QUEUE=invoices.parked boomerang topology apply --work-queue invoices',
    ]);
  });

  it.each([
    ['amq.bad', 'belong to the broker'],
    ['x'.repeat(250), '1 to 255 bytes'],
  ])('refuses the queue name %s with a ConfigError', (name, message) => {
    expect(() => consoleQueuesFromConfig(loadConfig({}), [name])).toThrow(
      expect.objectContaining({ name: 'ConfigError', message: expect.stringContaining(message) }),
    );
  });
});

describe('shellWord', () => {
  it.each([
    ['qa.invoices', 'qa.invoices'],
    ['shop/orders-v2', 'shop/orders-v2'],
    ['two words', "'two words'"],
    ["it's", "'it'\\''s'"],
    ['$(rm)', "'$(rm)'"],
  ])('writes %j as %s', (word, expected) => {
    expect(shellWord(word)).toBe(expected);
  });
});

describe('QueueLock', () => {
  it('runs work on one queue one at a time, in order, even after a failure', async () => {
    const lock = new QueueLock();
    const log: string[] = [];
    const step =
      (name: string, fail = false) =>
      async () => {
        log.push(`start ${name}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        log.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([lock.run('q', step('a', true)), lock.run('q', step('b')), lock.run('q', step('c'))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });
});
