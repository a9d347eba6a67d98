import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyStoreError } from '../../shared/errors.js';
import { STORE_REQUEST_TIMEOUT_MS } from '../../shared/idempotency/store-handle.js';
import { recordingLogger } from '../helpers/fakes.js';
import { countedWork, dynamoDbKind, message, REMAINING_MS, redisKind, silentServer, useIdempotencyStore } from '../helpers/idempotency-stores.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

// A store failure must reach the caller as a rejection of `run`, never float free and crash the process.
const unhandled: unknown[] = [];
const collect = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeAll(() => {
  process.on('unhandledRejection', collect);
});
afterAll(async () => {
  // Give a late rejection (a socket error after the test ended) its turn before counting.
  await new Promise((resolve) => setImmediate(resolve));
  process.off('unhandledRejection', collect);
  expect(unhandled).toEqual([]);
});

describe.each([redisKind(), dynamoDbKind()])('createIdempotencyGuard on $name when the store fails', (kind) => {
  const log = recordingLogger('warn');
  const { fixture, guard } = useIdempotencyStore(kind, log.log);

  it('throws IdempotencyStoreError naming the store, without calling the work, when nothing listens', async () => {
    // Prepare
    const g = guard({ store: await kind.refusing() });
    const work = countedWork();
    // Act
    const failed = g.run(message('order-1'), work.run, REMAINING_MS);
    // Assess
    await expect(failed).rejects.toBeInstanceOf(IdempotencyStoreError);
    const error = (await failed.catch((e: unknown) => e)) as IdempotencyStoreError;
    expect(error).toMatchObject({ name: 'IdempotencyStoreError', retryable: true });
    expect(error.message).toContain(error.store);
    expect(error.message).toContain('ECONNREFUSED');
    expect(work.runs).toBe(0);
    // The guard is still usable: the next message fails the same way, it does not hang or crash.
    await expect(g.run(message('order-2'), work.run, REMAINING_MS)).rejects.toBeInstanceOf(IdempotencyStoreError);
  });

  it('throws IdempotencyStoreError when the store accepts connections but never answers (the timeouts bound the wait)', async () => {
    // Prepare
    const silent = await silentServer();
    const g = guard({ store: kind.at(silent.endpoint) });
    const work = countedWork();
    try {
      // Act
      const failed = g.run(message('order-3'), work.run, REMAINING_MS);
      // Assess
      await expect(failed).rejects.toBeInstanceOf(IdempotencyStoreError);
      expect(work.runs).toBe(0);
    } finally {
      await silent.close();
    }
  });

  it('throws IdempotencyStoreError when a connected store stops answering (the request timeout bounds the wait)', async () => {
    // Prepare
    const proxy = await TcpProxy.start(fixture().port);
    try {
      const g = guard({ store: fixture().via(proxy.port) });
      const work = countedWork();
      await g.run(message('order-8'), work.run, REMAINING_MS);
      proxy.silence();
      const started = performance.now();
      // Act
      const failed = g.run(message('order-9'), work.run, REMAINING_MS);
      // Assess
      await expect(failed).rejects.toBeInstanceOf(IdempotencyStoreError);
      // The DynamoDB client tries twice; the Redis client once, as its connection is still up.
      expect(performance.now() - started).toBeLessThan(2 * STORE_REQUEST_TIMEOUT_MS + 1_000);
      expect(work.runs).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it('throws IdempotencyStoreError for each of several runs started together when a connected store stops answering', async () => {
    // Prepare
    const proxy = await TcpProxy.start(fixture().port);
    try {
      const g = guard({ store: fixture().via(proxy.port) });
      const work = countedWork();
      await g.run(message('order-11'), work.run, REMAINING_MS);
      proxy.silence();
      // Act: claimed in the same turn (on Redis, one pipelined write)
      const failed = await Promise.allSettled(['order-12', 'order-13', 'order-14'].map((key) => g.run(message(key), work.run, REMAINING_MS)));
      // Assess
      expect(failed.map((r) => (r.status === 'rejected' ? (r.reason as Error).name : r.value))).toEqual([
        'IdempotencyStoreError',
        'IdempotencyStoreError',
        'IdempotencyStoreError',
      ]);
      expect(work.runs).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it('closes at once while a connect to a store that never answers is under way, and that run fails', async () => {
    // Prepare
    const silent = await silentServer();
    const g = guard({ store: kind.at(silent.endpoint) });
    const work = countedWork();
    try {
      const failed = g.run(message('order-10'), work.run, REMAINING_MS);
      await silent.accepted;
      const started = performance.now();
      // Act
      await g.close();
      // Assess
      expect(performance.now() - started).toBeLessThan(100);
      await expect(failed).rejects.toBeInstanceOf(IdempotencyStoreError);
      expect(work.runs).toBe(0);
    } finally {
      await silent.close();
    }
  });

  it('opens a new connection when the old one was cut between runs', async () => {
    // Prepare
    const proxy = await TcpProxy.start(fixture().port);
    try {
      const g = guard({ store: fixture().via(proxy.port) });
      const work = countedWork();
      await g.run(message('order-4'), work.run, REMAINING_MS);
      // Act
      expect(proxy.cutAll()).toBeGreaterThan(0);
      const outcomes = [await g.run(message('order-5'), work.run, REMAINING_MS), await g.run(message('order-4'), work.run, REMAINING_MS)];
      // Assess
      expect(outcomes).toEqual(['ran', 'duplicate']);
      expect(work.runs).toBe(2);
    } finally {
      await proxy.close();
    }
  });

  it("answers 'ran' and logs why when the store dies after the work succeeded (throwing would repeat the effect)", async () => {
    // Prepare
    const proxy = await TcpProxy.start(fixture().port);
    const g = guard({ store: fixture().via(proxy.port) });
    log.lines.length = 0;
    // Act: the store goes away while the work runs, so the completed record cannot be written
    const outcome = await g.run(message('order-6'), () => proxy.close(), REMAINING_MS);
    // Assess
    expect(outcome).toBe('ran');
    expect(log.entries()).toEqual([
      expect.objectContaining({ level: 'warn', key: 'order-6', message: expect.stringContaining('could not be marked completed') }),
    ]);
  });

  it("propagates the work's own error, and logs why the key stays held, when the store dies during a failing run", async () => {
    // Prepare
    const proxy = await TcpProxy.start(fixture().port);
    const g = guard({ store: fixture().via(proxy.port) });
    const failure = new Error('partner answered 503');
    log.lines.length = 0;
    // Act
    const failed = g.run(
      message('order-7'),
      async () => {
        await proxy.close();
        throw failure;
      },
      REMAINING_MS,
    );
    // Assess
    await expect(failed).rejects.toBe(failure);
    expect(log.entries()).toEqual([expect.objectContaining({ level: 'warn', key: 'order-7', message: expect.stringContaining('could not be released') })]);
  });
});
