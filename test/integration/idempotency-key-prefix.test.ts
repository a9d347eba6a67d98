import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { createIdempotencyGuard, type IdempotencyGuard } from '../../shared/idempotency/guard.js';
import { countedWork, message, REDIS_URL, REMAINING_MS } from '../helpers/idempotency-stores.js';

describe('Function: loadConfig with idempotency on Redis (the key prefix)', () => {
  const admin = new Redis(REDIS_URL);
  const guards: IdempotencyGuard[] = [];
  const queues: string[] = [];

  afterEach(async () => {
    await Promise.all(guards.splice(0).map((g) => g.close()));
    for (const queue of queues.splice(0)) {
      const found: string[] = [];
      for await (const batch of admin.scanStream({ match: `${queue}#*`, count: 1000 })) found.push(...(batch as string[]));
      if (found.length > 0) await admin.del(...found);
    }
  });
  afterAll(async () => {
    await admin.quit();
  });

  /** The guard one queue's functions build from their config: the store and window from the code, the prefix by default. */
  const guardOf = (workQueue: string): IdempotencyGuard => {
    queues.push(workQueue);
    const config = loadConfig({}, `${workQueue}-pull`, { source: `defineQueue('${workQueue}')`, workQueue, idempotency: { store: REDIS_URL } });
    if (config.idempotency === undefined) throw new Error('idempotency is off');
    const guard = createIdempotencyGuard(config.idempotency);
    guards.push(guard);
    return guard;
  };

  it('runs the handler of each of two queues sharing a store for the same messageId', async () => {
    // Prepare
    const [orders, invoices] = [guardOf(`test-${randomUUID()}`), guardOf(`test-${randomUUID()}`)];
    const [ordersWork, invoicesWork] = [countedWork(), countedWork()];
    const messageId = `shared-${randomUUID()}`;
    // Act
    const outcomes = [
      await orders.run(message(messageId), ordersWork.run, REMAINING_MS),
      await invoices.run(message(messageId), invoicesWork.run, REMAINING_MS),
    ];
    // Assess
    expect(outcomes).toEqual(['ran', 'ran']);
    expect([ordersWork.runs, invoicesWork.runs]).toEqual([1, 1]);
  });

  it('still acks a duplicate on the same queue without running its handler', async () => {
    // Prepare
    const queue = `test-${randomUUID()}`;
    const work = countedWork();
    const messageId = `again-${randomUUID()}`;
    // Act
    const outcomes = [
      await guardOf(queue).run(message(messageId), work.run, REMAINING_MS),
      await guardOf(queue).run(message(messageId), work.run, REMAINING_MS),
    ];
    // Assess
    expect(outcomes).toEqual(['ran', 'duplicate']);
    expect(work.runs).toBe(1);
  });
});
