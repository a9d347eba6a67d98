import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { IdempotencyInProgressError } from '../../shared/errors.js';
import { recordingLogger } from '../helpers/fakes.js';
import { countedWork, dynamoDbKind, message, REMAINING_MS, redisKind, useIdempotencyStore } from '../helpers/idempotency-stores.js';

describe.each([redisKind(), dynamoDbKind()])('createIdempotencyGuard on $name', (kind) => {
  const log = recordingLogger('warn');
  const { fixture, guard } = useIdempotencyStore(kind, log.log);

  it('runs the work once for the same key twice; the second run is a duplicate', async () => {
    // Prepare
    const work = countedWork();
    const g = guard();
    // Act
    const first = await g.run(message('order-1'), work.run, REMAINING_MS);
    const second = await guard().run(message('order-1'), work.run, REMAINING_MS);
    // Assess
    expect([first, second]).toEqual(['ran', 'duplicate']);
    expect(work.runs).toBe(1);
    expect(await fixture().records()).toBe(1);
  });

  it('lets one of two concurrent runs of a key run; the other throws IdempotencyInProgressError', async () => {
    // Prepare
    const work = countedWork(true);
    const first = guard().run(message('order-2'), work.run, REMAINING_MS);
    await work.running;
    // Act
    const second = guard().run(message('order-2'), work.run, REMAINING_MS);
    // Assess
    await expect(second).rejects.toBeInstanceOf(IdempotencyInProgressError);
    await expect(second).rejects.toMatchObject({ name: 'IdempotencyInProgressError', key: 'order-2', retryable: true });
    work.release();
    await expect(first).resolves.toBe('ran');
    expect(work.runs).toBe(1);
  });

  it('runs a key once when two runs of it start at once in the same container: the second waits for the first and is a duplicate', async () => {
    // Prepare
    const work = countedWork(true);
    const g = guard();
    // Act
    const first = g.run(message('order-2b'), work.run, REMAINING_MS);
    const second = g.run(message('order-2b'), work.run, REMAINING_MS);
    await work.running;
    work.release();
    const outcomes = await Promise.allSettled([first, second]);
    // Assess: the second neither ran nor met the first's in-progress record
    expect(outcomes.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).name))).toEqual(['ran', 'duplicate']);
    expect(work.runs).toBe(1);
  });

  it("runs the second of two runs of a key at once in the same container when the first's work throws (the key was released)", async () => {
    // Prepare
    const g = guard();
    let calls = 0;
    const failsFirst = async (): Promise<void> => {
      calls += 1;
      if (calls === 1) throw new Error('partner down');
    };
    // Act
    const outcomes = await Promise.allSettled([g.run(message('order-2c'), failsFirst, REMAINING_MS), g.run(message('order-2c'), failsFirst, REMAINING_MS)]);
    // Assess
    expect(outcomes.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['partner down', 'ran']);
    expect(calls).toBe(2);
  });

  it('runs each of several keys started in the same turn once; their second runs are duplicates', async () => {
    // Prepare: runs started together claim their keys together (on Redis, one pipelined write)
    const work = countedWork();
    const g = guard();
    const keys = ['order-7a', 'order-7b', 'order-7c', 'order-7d'];
    // Act
    const first = await Promise.all(keys.map((key) => g.run(message(key), work.run, REMAINING_MS)));
    const second = await Promise.all(keys.map((key) => g.run(message(key), work.run, REMAINING_MS)));
    // Assess
    expect(first).toEqual(['ran', 'ran', 'ran', 'ran']);
    expect(second).toEqual(['duplicate', 'duplicate', 'duplicate', 'duplicate']);
    expect(work.runs).toBe(4);
    expect(await fixture().records()).toBe(4);
  });

  it('leaves no record when the work throws, propagates its error unchanged, and the next run runs', async () => {
    // Prepare
    const failure = new Error('partner answered 503');
    const work = countedWork();
    const g = guard();
    // Act
    const failed = g.run(
      message('order-3'),
      async () => {
        throw failure;
      },
      REMAINING_MS,
    );
    // Assess
    await expect(failed).rejects.toBe(failure);
    expect(await fixture().records()).toBe(0);
    await expect(g.run(message('order-3'), work.run, REMAINING_MS)).resolves.toBe('ran');
    await expect(g.run(message('order-3'), work.run, REMAINING_MS)).resolves.toBe('duplicate');
    expect(work.runs).toBe(1);
  });

  it('propagates a thrown non-Error unchanged too', async () => {
    // Act
    const failed = guard().run(message('order-4'), () => Promise.reject('plain string'), REMAINING_MS);
    // Assess
    await expect(failed).rejects.toBe('plain string');
    expect(await fixture().records()).toBe(0);
    expect(log.lines).toEqual([]);
  });

  it('runs a key again once its ttlSeconds have passed', async () => {
    // Prepare
    const work = countedWork();
    const g = guard({ ttlSeconds: 1 });
    await g.run(message('order-5'), work.run, REMAINING_MS);
    // Act: past the window whatever the rounding of the expiry second (the store does the waiting)
    await sleep(2_200);
    const again = await g.run(message('order-5'), work.run, REMAINING_MS);
    // Assess
    expect(again).toBe('ran');
    expect(work.runs).toBe(2);
  });

  it('frees the key of a run that never finishes once its remaining time is up', async () => {
    // Prepare: the first container "crashes" mid-run (its work never returns in time)
    const stuck = countedWork(true);
    const crashed = guard().run(message('order-6'), stuck.run, 300);
    await stuck.running;
    const work = countedWork();
    // Act: past the stuck run's remaining time (300 ms), which is when its key is freed
    await sleep(600);
    const takeover = await guard().run(message('order-6'), work.run, REMAINING_MS);
    // Assess
    expect(takeover).toBe('ran');
    expect(work.runs).toBe(1);
    stuck.release();
    await crashed;
  });

  it("answers 'no-key' and runs the work, every time, for a message without a messageId", async () => {
    // Prepare
    const work = countedWork();
    const g = guard();
    // Act
    const outcomes = [await g.run(message(undefined), work.run, REMAINING_MS), await g.run(message(undefined), work.run, REMAINING_MS)];
    // Assess
    expect(outcomes).toEqual(['no-key', 'no-key']);
    expect(work.runs).toBe(2);
    expect(await fixture().records()).toBe(0);
  });

  it('uses the key function the team gives (here the order id in the body, whatever the messageId)', async () => {
    // Prepare
    const work = countedWork();
    const g = guard({ key: (m) => String(m.json<{ orderId: number }>().orderId) });
    // Act
    const outcomes = [
      await g.run(message('a', '{"orderId":7}'), work.run, REMAINING_MS),
      await g.run(message('b', '{"orderId":7}'), work.run, REMAINING_MS),
      await g.run(message('c', '{"orderId":8}'), work.run, REMAINING_MS),
    ];
    // Assess
    expect(outcomes).toEqual(['ran', 'duplicate', 'ran']);
    expect(work.runs).toBe(2);
  });
});
