import { describe, expect, it } from 'vitest';
import type { Pacer } from '../../shared/core/pacer.js';
import { IdempotencyInProgressError, RetryableError } from '../../shared/errors.js';
import type { IdempotencyGuard } from '../../shared/idempotency/guard.js';
import type { Handler } from '../../shared/message/message.js';
import { NativeAnnotation } from '../../shared/native/native-annotations.js';
import { balanced, byId, deliveries, delivery, engineConfig, invoke, MemoryTransport, MODES, T0, useFakeClock } from '../helpers/memory-transport.js';

useFakeClock();

/** A guard that answers by message id: `dup` completed before, `held` is held by another run, `nokey` has no key; the rest run. */
const guardById: IdempotencyGuard = {
  async run(message, work) {
    const id = message.properties.messageId;
    if (id === 'dup') return 'duplicate';
    if (id === 'held') throw new IdempotencyInProgressError('held');
    await work();
    return id === 'nokey' ? 'no-key' : 'ran';
  },
  close: async () => undefined,
};

/** A handler that takes `ms` on the fake clock and notes when each message started. */
function slow(ms: number, starts: number[] = []): Handler {
  return () => {
    starts.push(Date.now() - T0);
    return new Promise<void>((resolve) => setTimeout(resolve, ms));
  };
}

describe('runInvocation: verdicts', () => {
  it.each(MODES)('%s: settles each message once with its verdict (ack, unkeyed ack, duplicate, retry, park, defer)', async (mode) => {
    // Prepare
    const transport = new MemoryTransport({ mode, config: engineConfig(), messages: ['ok', 'nokey', 'dup', 'fail', 'bad', 'held'].map((id) => delivery(id)) });
    // Act
    const { summary, error } = await invoke(transport, byId(), { idempotency: guardById });
    // Assess
    expect(error).toBeUndefined();
    expect(transport.settled().sort()).toEqual(['bad park', 'dup duplicate', 'fail retry', 'held defer', 'nokey ack', 'ok ack']);
    expect(transport.verdictOf('fail')).toMatchObject({ retryNo: 0, nextRetryNo: 1, delayMs: 1000, error: { name: 'RetryableError' } });
    expect(transport.verdictOf('bad')).toMatchObject({ reason: 'unrecoverable error UnrecoverableError', copyable: true });
    expect(transport.verdictOf('held')).toMatchObject({ retryNo: 0, delayMs: 1000, why: { name: 'IdempotencyInProgressError' } });
    expect(summary).toMatchObject({
      received: 6,
      acked: 2,
      withoutIdempotencyKey: 1,
      skippedDuplicates: 1,
      retried: 1,
      parked: 1,
      deferred: 1,
      requeued: 0,
      stoppedBecause: 'idle',
      parkedDepth: 0,
    });
    expect(transport.events.slice(-3)).toEqual(['finish', 'close', 'completed']);
  });

  it.each(['pull', 'event'] as const)('%s: gives back, untried, a message the guard cannot run when there is no delay path', async (mode) => {
    // Prepare: MAX_RETRIES=0 in tiers mode leaves no delay path to defer to.
    const transport = new MemoryTransport({ mode, config: engineConfig({ MAX_RETRIES: '0' }), messages: [delivery('held'), delivery('ok')] });
    // Act
    const { summary } = await invoke(transport, byId(), { idempotency: guardById });
    // Assess
    expect(transport.verdictOf('held')).toEqual({ kind: 'give-back', why: 'no-delay-path' });
    expect(summary).toMatchObject({ received: 2, acked: 1, requeued: 1, deferred: 0 });
  });

  it.each([
    { mode: 'pull', expected: { kind: 'park', reason: 'retries exhausted: 3 of 3 made' } },
    { mode: 'event', expected: { kind: 'park', reason: 'retries exhausted: 3 of 3 made' } },
    { mode: 'native', expected: { kind: 'retry', retryNo: 1, nextRetryNo: 2 } },
  ] as const)('$mode: reads the retry count where the transport says ($expected.kind)', async ({ mode, expected }) => {
    // Prepare: RETRY_HEADER says 3 (spent), the native annotation says 1.
    const transport = new MemoryTransport({ mode, config: engineConfig(), messages: [delivery('fail', { 'x-retry-no': 3, [NativeAnnotation.retryNo]: 1 })] });
    // Act
    const { summary } = await invoke(transport, byId());
    // Assess
    expect(transport.verdictOf('fail')).toMatchObject(expected);
    expect(balanced(summary)).toBe(true);
  });

  it('counts a run without an idempotency key once, however the transport settles it', async () => {
    // Prepare
    const transport = new MemoryTransport({ mode: 'native', config: engineConfig(), messages: [delivery('nokey'), delivery('ok')] });
    // Act
    const { summary } = await invoke(transport, byId(), { idempotency: guardById });
    // Assess
    expect(summary).toMatchObject({ acked: 2, withoutIdempotencyKey: 1 });
  });
});

describe('runInvocation: concurrency and the breaker', () => {
  it.each(MODES)('%s: runs one handler while the breaker probes, then at most CONCURRENCY at once', async (mode) => {
    // Prepare
    const starts: number[] = [];
    const transport = new MemoryTransport({ mode, config: engineConfig({ CONCURRENCY: '3' }), messages: deliveries(7) });
    // Act
    const { summary } = await invoke(transport, slow(100, starts));
    // Assess: the first alone (the probe), then three at a time.
    expect(starts).toEqual([0, 100, 100, 100, 200, 200, 200]);
    expect(summary).toMatchObject({ received: 7, acked: 7, breakerOpened: false });
  });

  it.each(MODES)('%s: keeps one handler at a time while retryable failures keep the breaker half-open', async (mode) => {
    // Prepare
    const starts: number[] = [];
    const handler: Handler = async (message, context) => {
      await slow(100, starts)(message, context);
      if (String(message.properties.messageId).startsWith('fail')) throw new RetryableError('HTTP 503');
    };
    const messages = [delivery('fail-1'), delivery('fail-2'), delivery('ok'), ...deliveries(3)];
    const transport = new MemoryTransport({ mode, config: engineConfig(), messages });
    // Act
    const { summary } = await invoke(transport, handler);
    // Assess
    expect(starts).toEqual([0, 100, 200, 300, 300, 300]);
    expect(summary).toMatchObject({ retried: 2, acked: 4, breakerOpened: false });
  });

  it.each(MODES)('%s: opens the breaker at BREAKER_THRESHOLD failures in a row and defers the rest untried', async (mode) => {
    // Prepare
    let calls = 0;
    const handler: Handler = () => {
      calls++;
      throw new RetryableError('HTTP 503');
    };
    const transport = new MemoryTransport({ mode, config: engineConfig(), messages: deliveries(6) });
    // Act
    const { summary, warnings } = await invoke(transport, handler);
    // Assess
    expect(calls).toBe(3);
    expect(transport.settled()).toEqual(['m-0 retry', 'm-1 retry', 'm-2 retry', 'm-3 defer', 'm-4 defer', 'm-5 defer']);
    expect(transport.verdictOf('m-3')).toMatchObject({ retryNo: 0, delayMs: 1000, why: { name: 'CircuitBreakerOpen' } });
    expect(summary).toMatchObject({ received: 6, retried: 3, deferred: 3, breakerOpened: true, stoppedBecause: 'breaker-open' });
    expect(warnings.filter((line) => line.startsWith('circuit breaker opened'))).toHaveLength(1);
  });

  it('never opens the breaker with BREAKER_THRESHOLD=0, and runs CONCURRENCY from the start', async () => {
    // Prepare
    const starts: number[] = [];
    const handler: Handler = async (message, context) => {
      await slow(100, starts)(message, context);
      throw new RetryableError('HTTP 503');
    };
    const transport = new MemoryTransport({ mode: 'pull', config: engineConfig({ BREAKER_THRESHOLD: '0', CONCURRENCY: '2' }), messages: deliveries(4) });
    // Act
    const { summary } = await invoke(transport, handler);
    // Assess
    expect(starts).toEqual([0, 0, 100, 100]);
    expect(summary).toMatchObject({ retried: 4, breakerOpened: false, stoppedBecause: 'idle' });
  });
});

describe('runInvocation: crash loops', () => {
  it.each(MODES)('%s: parks the first message at CRASH_LOOP_LIMIT without calling the handler, and handles the others', async (mode) => {
    // Prepare: returned with the culprit by each crash, the neighbour is at the limit too.
    const seen: string[] = [];
    const handler: Handler = (message) => {
      seen.push(String(message.properties.messageId));
    };
    const messages = [
      delivery('looping', { 'x-delivery-count': 10 }),
      delivery('below', { 'x-delivery-count': 9 }),
      delivery('neighbour', { 'x-delivery-count': 10 }),
      delivery('last', { 'x-delivery-count': 20 }),
    ];
    const transport = new MemoryTransport({ mode, config: engineConfig({ CRASH_LOOP_LIMIT: '10' }), messages });
    // Act
    const { summary } = await invoke(transport, handler);
    // Assess: at the last count (20) it is parked even after another park.
    expect(seen).toEqual(['below', 'neighbour']);
    expect(transport.verdictOf('looping')).toMatchObject({ kind: 'park', reason: 'crash loop: delivered 11 times', error: { name: 'CrashLoopError' } });
    expect(transport.verdictOf('last')).toMatchObject({ kind: 'park', reason: 'crash loop: delivered 21 times' });
    expect(summary).toMatchObject({ parked: 2, acked: 2 });
  });

  it.each([
    { mode: 'pull', seen: ['looping', 'neighbour'], parked: 0 },
    { mode: 'native', seen: ['looping', 'neighbour'], parked: 0 },
    { mode: 'event', seen: ['neighbour'], parked: 1 },
  ] as const)('$mode: a message 4.3 handed out CRASH_LOOP_LIMIT times after nacks (x-acquired-count alone): parked $parked', async ({ mode, seen, parked }) => {
    // Prepare: a mapping that nacks after each crash raises only x-acquired-count on 4.3; only event mode counts it.
    const handled: string[] = [];
    const handler: Handler = (message) => {
      handled.push(String(message.properties.messageId));
    };
    const messages = [delivery('looping', { 'x-acquired-count': 10 }), delivery('neighbour', { 'x-acquired-count': 10 })];
    const transport = new MemoryTransport({ mode, config: engineConfig(), messages });
    // Act
    const { summary } = await invoke(transport, handler);
    // Assess
    expect(handled).toEqual(seen);
    expect(summary).toMatchObject({ parked, acked: 2 - parked });
    if (parked > 0) expect(transport.verdictOf('looping')).toMatchObject({ kind: 'park', reason: 'crash loop: delivered 11 times' });
  });

  it("native: leaves the mode's own failed settlements out of the crash count", async () => {
    // Prepare: 15 deliveries of which 6 were its own retries = 9 crashes; 16 and 6 = 10 crashes.
    const own = NativeAnnotation.failedSettlements;
    const messages = [delivery('nine', { 'x-delivery-count': 15, [own]: 6 }), delivery('ten', { 'x-delivery-count': 16, [own]: 6 })];
    const transport = new MemoryTransport({ mode: 'native', config: engineConfig(), messages });
    // Act
    await invoke(transport, () => undefined);
    // Assess
    expect(transport.settled()).toEqual(['nine ack', 'ten park']);
    expect(transport.verdictOf('ten')).toMatchObject({ reason: 'crash loop: delivered 17 times' });
  });
});

/** A rate limit of one start per `intervalMs`, on the fake clock; it notes what it reports waited. */
function fakePacer(intervalMs: number) {
  let nextAt = Date.now();
  const waited: number[] = [];
  const pacer: Pacer = {
    turn(signal) {
      const askedAt = Date.now();
      const at = Math.max(askedAt, nextAt);
      nextAt = at + intervalMs;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waited.push(at - askedAt);
          resolve(at - askedAt);
        }, at - askedAt);
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve(undefined);
          },
          { once: true },
        );
      });
    },
    describe: () => ({ limiter: 'share', perSecond: 1000 / intervalMs, shares: 1 }),
  };
  return { pacer, waited };
}

describe('runInvocation: the rate limit', () => {
  it.each(MODES)('%s: starts each handler at its turn and sums the waits in pacedMs', async (mode) => {
    // Prepare
    const starts: number[] = [];
    const { pacer, waited } = fakePacer(1000);
    const transport = new MemoryTransport({ mode, config: engineConfig({ BREAKER_THRESHOLD: '0' }), messages: deliveries(4) });
    // Act
    const { summary } = await invoke(transport, slow(10, starts), { pacer });
    // Assess
    expect(starts).toEqual([0, 1000, 2000, 3000]);
    expect(summary.pacedMs).toBe(waited.reduce((sum, ms) => sum + ms, 0));
    expect(summary.pacedMs).toBeGreaterThan(0);
    expect(summary).toMatchObject({ acked: 4 });
  });

  it.each([
    { mode: 'pull', giveBackCounts: true, kind: 'defer' },
    { mode: 'pull', giveBackCounts: false, kind: 'give-back' },
    { mode: 'event', giveBackCounts: false, kind: 'give-back' },
    { mode: 'native', giveBackCounts: false, kind: 'give-back' },
  ] as const)(
    '$mode (give-back counts: $giveBackCounts): a message still waiting for its turn at the stop is not tried: $kind',
    async ({ mode, giveBackCounts, kind }) => {
      // Prepare: one start per 4 s in a 10 s budget (the stop at 9 s): starts at 0, 4 s, 8 s.
      const starts: number[] = [];
      const { pacer } = fakePacer(4000);
      const transport = new MemoryTransport({ mode, giveBackCounts, config: engineConfig({ BREAKER_THRESHOLD: '0' }), messages: deliveries(5) });
      // Act
      const { summary } = await invoke(transport, slow(10, starts), { pacer });
      // Assess
      expect(starts).toEqual([0, 4000, 8000]);
      expect(transport.settled().slice(3)).toEqual([`m-3 ${kind}`, `m-4 ${kind}`]);
      if (kind === 'defer') expect(transport.verdictOf('m-3')).toMatchObject({ delayMs: 0, why: { name: 'OutOfTime' } });
      expect(summary).toMatchObject({ received: 5, acked: 3 });
      expect(balanced(summary)).toBe(true);
    },
  );

  it('defers, untried, the messages waiting for their turn when the breaker opens', async () => {
    // Prepare
    const starts: number[] = [];
    const { pacer } = fakePacer(1000);
    const handler: Handler = (message) => {
      starts.push(Date.now() - T0);
      if (message.properties.messageId !== 'm-0') throw new RetryableError('HTTP 503');
    };
    const transport = new MemoryTransport({ mode: 'pull', config: engineConfig({ BREAKER_THRESHOLD: '1' }), messages: deliveries(5) });
    // Act
    const { summary } = await invoke(transport, handler, { pacer });
    // Assess: m-0 closes the breaker; m-1 opens it; m-2..m-4 leave the line.
    expect(starts).toEqual([0, 1000]);
    expect(transport.settled()).toEqual(['m-0 ack', 'm-1 retry', 'm-2 defer', 'm-3 defer', 'm-4 defer']);
    expect(summary).toMatchObject({ stoppedBecause: 'breaker-open', deferred: 3 });
  });
});
