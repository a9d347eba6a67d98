import { describe, expect, it } from 'vitest';
import { containerPacing, createPacer } from '../../shared/core/pacer.js';
import type { ResolvedRateLimit } from '../../shared/config/rate-limit.js';
import type { RateStore } from '../../shared/pacing/rate-store.js';
import { recordingLogger } from '../helpers/fakes.js';
import { FakeClock } from '../helpers/fake-clock.js';

/** A store as the Redis script works (one bucket per key, no burst, no reservation), on the test's clock. */
class FakeRateStore implements RateStore {
  public readonly asked: string[] = [];
  public failing: Error | undefined;
  private readonly nextStart = new Map<string, number>();

  public constructor(private readonly clock: FakeClock) {}

  public async take(key: string, intervalMs: number): Promise<number> {
    this.asked.push(key);
    if (this.failing !== undefined) throw this.failing;
    const now = this.clock.now();
    const next = this.nextStart.get(key);
    if (next !== undefined && next > now) return Math.ceil(next - now);
    this.nextStart.set(key, now + intervalMs);
    return 0;
  }

  public close(): void {}
}

const KEY = 'boomerang:rate:/:orders';

/** `count` starts asked of each pacer at once; the times at which each went, by pacer. */
function startsOf(pacers: readonly ReturnType<typeof createPacer>[], clock: FakeClock, count: number): number[][] {
  const signal = new AbortController().signal;
  return pacers.map((pacer) => {
    const went: number[] = [];
    for (let i = 0; i < count; i++) void pacer.turn(signal).then((headMs) => headMs !== undefined && went.push(clock.now()));
    return went;
  });
}

describe('createPacer', () => {
  it.each([
    { perSecond: 20, shares: 2, expected: [0, 100, 200, 300] },
    { perSecond: 20, shares: 1, expected: [0, 50, 100, 150] },
    { perSecond: 0.5, shares: 1, expected: [0, 2000, 4000, 6000] },
    { perSecond: 10, shares: 3, expected: [0, 300, 600, 900] },
  ])('without a store, gives an invocation its share: $perSecond a second over $shares shares', async ({ perSecond, shares, expected }) => {
    // Prepare
    const clock = new FakeClock();
    const pacer = createPacer({ perSecond, shares, store: undefined }, { key: KEY, log: recordingLogger().log, clock });
    // Act
    const [went] = startsOf([pacer], clock, 4);
    await clock.advance(10_000);
    // Assess
    expect(went).toEqual(expected);
    expect(pacer.describe()).toEqual({ limiter: 'share', perSecond, shares });
  });

  it('with a store, lets two invocations share the limit exactly, whatever their shares', async () => {
    // Prepare: 20 a second; shares 2 would give each 10, but the store lets them take what the other leaves.
    const clock = new FakeClock();
    const store = new FakeRateStore(clock);
    const limit: ResolvedRateLimit = { perSecond: 20, shares: 2, store: { url: 'redis://pace:6379', from: 'RATE_LIMIT_STORE' } };
    const pacers = [0, 1].map(() => createPacer(limit, { store: Promise.resolve(store), key: KEY, log: recordingLogger().log, clock }));
    // Act
    const [first, second] = startsOf(pacers, clock, 10) as [number[], number[]];
    await clock.advance(999);
    // Assess: one start every 50 ms for the queue, 20 in the second.
    const all = [...first, ...second].sort((a, b) => a - b);
    expect(all).toHaveLength(20);
    expect(all.every((at, i) => i === 0 || at - (all[i - 1] as number) >= 50)).toBe(true);
    expect(new Set(store.asked)).toEqual(new Set([KEY]));
    expect(pacers[0]?.describe()).toEqual({ limiter: 'store', perSecond: 20, shares: 2 });
  });

  it('falls back to its share when the store fails, warns once, and starts no burst on the switch', async () => {
    // Prepare
    const clock = new FakeClock();
    const store = new FakeRateStore(clock);
    const logger = recordingLogger('warn');
    const limit: ResolvedRateLimit = { perSecond: 20, shares: 2, store: { url: 'redis://:s3cret@pace:6379', from: 'RATE_LIMIT_STORE' } };
    const pacer = createPacer(limit, { store: Promise.resolve(store), key: KEY, log: logger.log, clock });
    const [went] = startsOf([pacer], clock, 6) as [number[]];
    await clock.advance(120);
    // Act
    store.failing = new Error('Command timed out');
    await clock.advance(1000);
    // Assess: 0, 50, 100 from the store; then from the last start, one every 100 ms.
    expect(went).toEqual([0, 50, 100, 200, 300, 400]);
    expect(logger.entries()).toEqual([
      expect.objectContaining({
        message: 'rate limit: the store failed; this invocation takes its share of the limit from now on',
        store: 'redis://:***@pace:6379',
        reason: 'Command timed out',
        perSecond: 20,
        shares: 2,
      }),
    ]);
    expect(pacer.describe()).toEqual({ limiter: 'share', perSecond: 20, shares: 2, storeFailed: 'Command timed out' });
  });

  it('falls back to its share when the store could not be opened at all', async () => {
    // Prepare
    const clock = new FakeClock();
    const limit: ResolvedRateLimit = { perSecond: 10, shares: 1, store: { url: 'redis://pace:6379', from: 'RATE_LIMIT_STORE' } };
    const opening = Promise.reject(new Error('Cannot find module ioredis'));
    const pacer = createPacer(limit, { store: opening, key: KEY, log: recordingLogger('error').log, clock });
    // Act
    const [went] = startsOf([pacer], clock, 3);
    await clock.advance(1000);
    // Assess
    expect(went).toEqual([0, 100, 200]);
  });
});

describe('containerPacing', () => {
  const config = { workQueue: 'orders', amqpUrls: ['amqp://guest:guest@127.0.0.1:5672/shop'], amqpSecret: undefined };

  it('makes no pacer without a rate limit, and never opens a store', () => {
    // Prepare
    const opened: string[] = [];
    const pacerFor = containerPacing(async (spec) => {
      opened.push(spec.url);
      throw new Error('never');
    });
    // Act & Assess
    expect(pacerFor({ ...config, rateLimit: undefined }, recordingLogger().log)).toBeUndefined();
    expect(opened).toEqual([]);
  });

  it("opens the store once per container, and asks it for the queue's bucket in its vhost", async () => {
    // Prepare
    const asked: string[] = [];
    const store: RateStore = {
      take: async (key) => {
        asked.push(key);
        return 0;
      },
      close: () => undefined,
    };
    const opened: string[] = [];
    const pacerFor = containerPacing(async (spec) => {
      opened.push(spec.url);
      return store;
    });
    const rateLimit: ResolvedRateLimit = { perSecond: 5, shares: 1, store: { url: 'redis://pace:6379', from: 'RATE_LIMIT_STORE' } };
    // Act: two invocations of the container.
    for (let invocation = 0; invocation < 2; invocation++) await pacerFor({ ...config, rateLimit }, recordingLogger().log)?.turn(new AbortController().signal);
    // Assess
    expect(opened).toEqual(['redis://pace:6379']);
    expect(asked).toEqual(['boomerang:rate:shop:orders', 'boomerang:rate:shop:orders']);
  });
});
