import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IdempotencyInProgressError, IdempotencyStoreError } from '../../shared/idempotency/errors.js';
import { createIdempotencyGuard, type IdempotencyGuard } from '../../shared/idempotency/guard.js';
import type { IdempotencyOptions } from '../../shared/idempotency/options.js';
import type { BoomerangMessage } from '../../shared/message/message.js';
import { toBoomerangMessage } from '../../shared/message/boomerang-message.js';
import { fakeDelivery, recordingLogger } from '../helpers/fakes.js';
import { dynamoDbKind, redisKind, silentServer, type StoreFixture } from '../helpers/idempotency-stores.js';

/** Generous: the work of a test runs in well under this on any machine; it only bounds a run's in-progress record. */
const REMAINING_MS = 60_000;

function message(messageId: string | undefined, body = '{"orderId":42}'): BoomerangMessage {
  return toBoomerangMessage(fakeDelivery({ body, properties: { messageId } }), 'orders', 0);
}

/** A piece of work that counts its runs and, when gated, waits for `release()`. */
function countedWork(gated = false) {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started: () => void = () => undefined;
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const work = {
    runs: 0,
    running,
    release,
    run: async () => {
      work.runs += 1;
      started();
      if (gated) await gate;
    },
  };
  return work;
}

describe.each([redisKind(), dynamoDbKind()])('createIdempotencyGuard on $name', (kind) => {
  let fixture: StoreFixture;
  const guards: IdempotencyGuard[] = [];
  const log = recordingLogger('warn');

  /** A guard for this test's prefix or table; a second call is a second container. */
  const guard = (overrides: Partial<IdempotencyOptions> = {}): IdempotencyGuard => {
    const created = createIdempotencyGuard({ store: fixture.store, keyPrefix: fixture.keyPrefix, ...overrides }, { ...fixture.deps, logger: log.log });
    guards.push(created);
    return created;
  };

  beforeAll(async () => {
    await kind.start();
  });
  afterAll(async () => {
    await kind.stop();
  });
  beforeEach(async () => {
    fixture = await kind.fixture();
  });
  afterEach(async () => {
    await Promise.all(guards.splice(0).map((g) => g.close()));
    await fixture.cleanup();
  });

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
    expect(await fixture.records()).toBe(1);
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

  it('leaves no record when the work throws, propagates its error unchanged, and the next run runs', async () => {
    // Prepare
    const failure = new Error('partner answered 503');
    const work = countedWork();
    const g = guard();
    // Act
    const failed = g.run(message('order-3'), async () => { throw failure; }, REMAINING_MS);
    // Assess
    await expect(failed).rejects.toBe(failure);
    expect(await fixture.records()).toBe(0);
    await expect(g.run(message('order-3'), work.run, REMAINING_MS)).resolves.toBe('ran');
    await expect(g.run(message('order-3'), work.run, REMAINING_MS)).resolves.toBe('duplicate');
    expect(work.runs).toBe(1);
  });

  it('propagates a thrown non-Error unchanged too', async () => {
    // Act
    const failed = guard().run(message('order-4'), () => Promise.reject('plain string'), REMAINING_MS);
    // Assess
    await expect(failed).rejects.toBe('plain string');
    expect(await fixture.records()).toBe(0);
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
    // Act
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
    expect(await fixture.records()).toBe(0);
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

  it('throws IdempotencyStoreError naming the store, without calling the work, when nothing listens', async () => {
    // Prepare
    const store = await kind.refusing();
    const g = createIdempotencyGuard({ store, keyPrefix: fixture.keyPrefix }, { ...fixture.deps, logger: log.log });
    guards.push(g);
    const work = countedWork();
    // Act
    const failed = g.run(message('order-9'), work.run, REMAINING_MS);
    // Assess
    await expect(failed).rejects.toBeInstanceOf(IdempotencyStoreError);
    await expect(failed).rejects.toMatchObject({ retryable: true, message: expect.stringMatching(/ECONNREFUSED/) });
    const error = (await failed.catch((e: unknown) => e)) as IdempotencyStoreError;
    expect(error.message).toContain(error.store);
    expect(work.runs).toBe(0);
    // The guard is still usable: the next message fails the same way, it does not hang or crash.
    await expect(g.run(message('order-10'), work.run, REMAINING_MS)).rejects.toBeInstanceOf(IdempotencyStoreError);
  });

  it('throws IdempotencyStoreError when the store accepts connections but never answers (bounded by the request timeout)', async () => {
    // Prepare
    const silent = await silentServer();
    const g = createIdempotencyGuard({ store: kind.at(silent.endpoint), keyPrefix: fixture.keyPrefix }, { ...fixture.deps, logger: log.log });
    guards.push(g);
    const work = countedWork();
    try {
      // Act
      const failed = g.run(message('order-11'), work.run, REMAINING_MS);
      // Assess
      await expect(failed).rejects.toBeInstanceOf(IdempotencyStoreError);
      expect(work.runs).toBe(0);
    } finally {
      await silent.close();
    }
  });
});
