import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/errors.js';
import { DEFAULT_FUNCTIONS_DIR, functionsDir, loadDeclaredQueues, pickQueue } from '../../shared/queues/declared-queues.js';
import { tempFunctionsDir, writeQueueFile } from '../fixtures/queue-files.js';

let cleanups: (() => void)[] = [];

/** A fresh functions folder, removed after the test. */
function folder(): string {
  const temp = tempFunctionsDir();
  cleanups.push(temp.remove);
  return temp.dir;
}

afterEach(() => {
  for (const remove of cleanups) remove();
  cleanups = [];
});

describe('loadDeclaredQueues', () => {
  it('finds the two example queues in functions/, each deploying both modes', async () => {
    // Act
    const queues = await loadDeclaredQueues({ env: {} });
    // Assess
    expect(queues.map((q) => [q.name, q.workQueue, q.deploy.modes])).toEqual([
      ['partner-sync', 'boomerang.partner-sync', ['pull', 'event']],
      ['webhooks', 'boomerang.webhooks', ['pull', 'event']],
    ]);
  });

  it('reads the folder BOOMERANG_FUNCTIONS_DIR names, and skips tests and declarations', async () => {
    // Prepare
    const dir = folder();
    writeQueueFile(dir, { template: 'orders', name: 'orders', workQueue: 'test-orders' });
    writeFileSync(join(dir, 'orders.test.ts'), 'throw new Error("not a queue file");\n');
    writeFileSync(join(dir, 'types.d.ts'), 'export type X = 1;\n');
    // Act
    const queues = await loadDeclaredQueues({ env: { BOOMERANG_FUNCTIONS_DIR: dir } });
    // Assess
    expect(queues.map((q) => q.name)).toEqual(['orders']);
    expect(queues[0]?.file).toBe(join(dir, 'orders.ts'));
  });

  it('takes the dir option first, then BOOMERANG_FUNCTIONS_DIR, then functions/', () => {
    expect([
      functionsDir({ dir: '/a', env: { BOOMERANG_FUNCTIONS_DIR: '/b' } }),
      functionsDir({ env: { BOOMERANG_FUNCTIONS_DIR: '/b' } }),
      functionsDir({ env: {} }),
    ]).toEqual(['/a', '/b', join(process.cwd(), DEFAULT_FUNCTIONS_DIR)]);
  });

  it('refuses a file that declares no queue, naming it and what to add', async () => {
    // Prepare
    const dir = folder();
    writeFileSync(join(dir, 'helpers.ts'), 'export const twice = (n: number) => n * 2;\n');
    // Act
    const result = loadDeclaredQueues({ dir });
    // Assess
    await expect(result).rejects.toThrow(ConfigError);
    await expect(result).rejects.toThrow(/helpers\.ts declares no queue: every file in .* must export `queue` made by defineQueue/);
  });

  it.each([
    ['a name', { name: 'orders', workQueue: 'test-orders-2', fileName: 'orders-copy' }, /both declare a queue named "orders"/],
    ['a work queue', { name: 'orders-2', workQueue: 'test-orders' }, /both consume the work queue "test-orders"/],
  ])('refuses two queues with the same %s', async (_what, second, message) => {
    // Prepare
    const dir = folder();
    writeQueueFile(dir, { template: 'orders', name: 'orders', workQueue: 'test-orders' });
    writeQueueFile(dir, { template: 'orders', ...second });
    // Act
    const result = loadDeclaredQueues({ dir });
    // Assess
    await expect(result).rejects.toThrow(message);
  });

  it('names the file whose options defineQueue refuses', async () => {
    // Prepare
    const dir = folder();
    writeQueueFile(dir, { template: 'orders', name: 'Orders', workQueue: 'test-orders' });
    // Act & Assess
    await expect(loadDeclaredQueues({ dir })).rejects.toThrow(/Orders\.ts: name in defineQueue\("Orders"\) must be lower-case letters/);
  });

  it('reads the files given instead of a folder, in their order, and names one that declares no queue', async () => {
    // Prepare
    const dir = folder();
    const zebra = writeQueueFile(dir, { template: 'orders', name: 'zebra', workQueue: 'test-zebra' });
    const apple = writeQueueFile(dir, { template: 'orders', name: 'apple', workQueue: 'test-apple' });
    writeFileSync(join(dir, 'helpers.ts'), 'export const twice = (n: number) => n * 2;\n');
    // Act
    const queues = await loadDeclaredQueues({ files: [zebra, apple], dir: '/nowhere' });
    const helpers = loadDeclaredQueues({ files: [join(dir, 'helpers.ts')] });
    // Assess
    expect(queues.map((q) => q.name)).toEqual(['zebra', 'apple']);
    await expect(helpers).rejects.toThrow(/helpers\.ts declares no queue: a definition file must export `queue` made by defineQueue/);
    await expect(loadDeclaredQueues({ files: [] })).rejects.toThrow('No queue is declared: the list of definition files is empty');
  });

  it('refuses an empty folder', async () => {
    await expect(loadDeclaredQueues({ dir: folder() })).rejects.toThrow('No queue is declared in');
  });
});

describe('pickQueue', () => {
  it('names the declared queues when the one asked for is not there', async () => {
    const queues = await loadDeclaredQueues({ env: {} });
    expect(pickQueue(queues, 'webhooks').name).toBe('webhooks');
    expect(() => pickQueue(queues, 'web')).toThrow('--function web: no such queue; the declared queues are partner-sync, webhooks');
  });
});
