import { describe, expect, it, vi } from 'vitest';
import { IdempotencyStoreError, RetryableError } from '../../shared/errors.js';
import type { IdempotencyGuard } from '../../shared/idempotency/guard.js';
import type { Handler } from '../../shared/message/message.js';
import {
  balanced,
  byId,
  deliveries,
  delivery,
  engineConfig,
  FakePauseMarker,
  invoke,
  MemoryTransport,
  MemoryTransportError,
  type Mode,
  MODES,
  T0,
  useFakeClock,
} from '../helpers/memory-transport.js';

const STREAMS: readonly Mode[] = ['pull', 'native'];

useFakeClock();

/** A handler that takes `ms` on the fake clock, or rejects as soon as its signal aborts; it notes each message it saw. */
function honouring(ms: number, seen: string[] = []): Handler {
  return (message, { signal }) => {
    seen.push(String(message.properties.messageId));
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(new Error('aborted'));
      });
    });
  };
}

const ok: Handler = () => undefined;

describe('runInvocation: stop reasons', () => {
  it.each(STREAMS)('%s: idle once a take waited IDLE_TIMEOUT_MS for nothing', async (mode) => {
    // Prepare
    const transport = new MemoryTransport({ mode, config: engineConfig(), messages: deliveries(2) });
    // Act
    const { summary } = await invoke(transport, ok);
    // Assess
    expect(summary).toMatchObject({ received: 2, acked: 2, stoppedBecause: 'idle', durationMs: 500 });
  });

  it.each(STREAMS)('%s: a take waits no longer than the stop, even with a longer IDLE_TIMEOUT_MS', async (mode) => {
    // Prepare: a message arrives at 8 s; the stop is at 9 s.
    const seen: string[] = [];
    const transport = new MemoryTransport({ mode, config: engineConfig({ IDLE_TIMEOUT_MS: '60000' }) });
    setTimeout(() => transport.arrive(delivery('late')), 8000);
    // Act
    const { summary } = await invoke(transport, byId(seen));
    // Assess
    expect(seen).toEqual(['late']);
    expect(summary).toMatchObject({ received: 1, acked: 1, stoppedBecause: 'budget', durationMs: 9000 });
  });

  it('event: an empty batch opens nothing and is idle at once', async () => {
    // Prepare
    const transport = new MemoryTransport({ mode: 'event', config: engineConfig() });
    // Act
    const { summary } = await invoke(transport, ok);
    // Assess
    expect(transport.events).toEqual(['open']);
    expect(summary).toMatchObject({ received: 0, stoppedBecause: 'idle', durationMs: 0 });
  });

  it('event: idle once the batch is all taken, without waiting', async () => {
    // Prepare
    const transport = new MemoryTransport({ mode: 'event', config: engineConfig(), messages: deliveries(3) });
    // Act
    const { summary } = await invoke(transport, ok);
    // Assess
    expect(summary).toMatchObject({ received: 3, acked: 3, stoppedBecause: 'idle', durationMs: 0 });
  });

  it.each(STREAMS)('%s: not idle while the prefetch window (BATCH_SIZE) is full of unsettled messages', async (mode) => {
    // Prepare: handlers take 2 s, four times the idle timeout, and hold the whole window meanwhile.
    const config = engineConfig({ BATCH_SIZE: '2', CONCURRENCY: '4', BREAKER_THRESHOLD: '0' });
    const transport = new MemoryTransport({ mode, config, messages: deliveries(5) });
    // Act
    const { summary } = await invoke(transport, honouring(2000));
    // Assess
    expect(summary).toMatchObject({ received: 5, acked: 5, stoppedBecause: 'idle', durationMs: 6000 });
  });

  it.each([
    { mode: 'pull', giveBackCounts: true, kind: 'defer' },
    { mode: 'pull', giveBackCounts: false, kind: 'give-back' },
    { mode: 'native', giveBackCounts: false, kind: 'give-back' },
  ] as const)('$mode (give-back counts: $giveBackCounts): stops at MAX_MESSAGES; the prefetched rest: $kind', async ({ mode, giveBackCounts, kind }) => {
    // Prepare
    const seen: string[] = [];
    const config = engineConfig({ MAX_MESSAGES: '3' });
    const transport = new MemoryTransport({ mode, giveBackCounts, config, messages: deliveries(6) });
    // Act
    const { summary } = await invoke(transport, honouring(10, seen));
    // Assess
    expect(seen).toEqual(['m-0', 'm-1', 'm-2']);
    expect(transport.settled().filter((line) => !line.endsWith(' ack'))).toEqual([`m-3 ${kind}`, `m-4 ${kind}`, `m-5 ${kind}`]);
    // A give-back waits for the flow to stop (it would come straight back); a deferral's copy does not.
    const firstRest = transport.events.indexOf(`settle m-3 ${kind}`);
    expect(firstRest > transport.events.indexOf('stopTaking')).toBe(kind === 'give-back');
    expect(summary).toMatchObject({ received: 6, acked: 3, stoppedBecause: 'max-messages' });
    expect(balanced(summary)).toBe(true);
  });

  it('event: MAX_MESSAGES does not cut a batch', async () => {
    // Prepare
    const transport = new MemoryTransport({ mode: 'event', config: engineConfig({ MAX_MESSAGES: '2' }), messages: deliveries(5) });
    // Act
    const { summary } = await invoke(transport, ok);
    // Assess
    expect(summary).toMatchObject({ received: 5, acked: 5, stoppedBecause: 'idle' });
  });

  it.each(MODES)("%s: stops at the budget's stop; the running handler's attempt counts, the untried go back", async (mode) => {
    // Prepare: one at a time, 2 s each, in a 10 s budget that stops taking at 9 s.
    const seen: string[] = [];
    const config = engineConfig({ CONCURRENCY: '1', BREAKER_THRESHOLD: '0' });
    const transport = new MemoryTransport({ mode, giveBackCounts: false, config, messages: deliveries(8) });
    // Act
    const { summary } = await invoke(transport, honouring(2000, seen));
    // Assess
    expect(seen).toEqual(['m-0', 'm-1', 'm-2', 'm-3', 'm-4']);
    expect(transport.verdictOf('m-4')).toMatchObject({
      kind: 'retry',
      nextRetryNo: 1,
      error: { name: 'HandlerCutOffError', message: 'aborted by the budget: Error: aborted' },
    });
    expect(transport.settled().slice(5)).toEqual(['m-5 give-back', 'm-6 give-back', 'm-7 give-back']);
    expect(summary).toMatchObject({ received: 8, acked: 4, retried: 1, requeued: 3, stoppedBecause: 'budget' });
  });

  it.each(STREAMS)('%s: stops when the broker cancels the consumer', async (mode) => {
    // Prepare
    const transport = new MemoryTransport({ mode, config: engineConfig(), messages: deliveries(2) });
    setTimeout(() => transport.cancel(), 200);
    // Act
    const { summary, error } = await invoke(transport, ok);
    // Assess
    expect(error).toBeUndefined();
    expect(summary).toMatchObject({ received: 2, acked: 2, stoppedBecause: 'consumer-cancelled', durationMs: 200 });
  });

  it.each(MODES)('%s: a lost connection fails the invocation: nothing more is settled or finished, the error carries the summary', async (mode) => {
    // Prepare: the connection breaks at 1 s, while m-1's handler runs.
    const transport = new MemoryTransport({ mode, config: engineConfig(), messages: deliveries(3) });
    setTimeout(() => transport.lose(new Error('socket closed')), 1000);
    // Act
    const { summary, error } = await invoke(transport, honouring(800));
    // Assess
    expect(error).toBeInstanceOf(MemoryTransportError);
    expect(error).toMatchObject({ reason: 'connection-lost', message: 'Invocation ended early: socket closed' });
    expect(transport.settled()).toEqual(['m-0 ack']);
    expect(transport.events).not.toContain('finish');
    expect(transport.events.slice(-2)).toEqual(['close', 'failed']);
    expect(transport.timeOf('close')).toBe(1000);
    expect(summary).toMatchObject({ acked: 1, stoppedBecause: 'connection-lost' });
    expect(summary.parkedDepth).toBeUndefined();
  });

  it('with idempotency on, waits for the running handlers after the connection broke (up to the hard stop)', async () => {
    // Prepare: their keys then end completed or released, not held in progress.
    const guard: IdempotencyGuard = {
      run: async (_message, work) => {
        await work();
        return 'ran';
      },
      close: async () => undefined,
    };
    const transport = new MemoryTransport({ mode: 'pull', config: engineConfig(), messages: deliveries(1) });
    setTimeout(() => transport.lose(new Error('socket closed')), 300);
    // Act
    const { error } = await invoke(transport, honouring(800), { idempotency: guard });
    // Assess
    expect(error).toMatchObject({ reason: 'connection-lost' });
    expect(transport.timeOf('close')).toBe(800);
    expect(transport.settles).toEqual([]);
  });

  it('a transport lost before the invocation saw it fails the invocation all the same', async () => {
    // Prepare: the connection broke while the transport opened.
    const transport = new MemoryTransport({ mode: 'pull', config: engineConfig(), messages: deliveries(2) });
    transport.lose(new Error('socket closed'));
    // Act
    const { summary, error } = await invoke(transport, ok);
    // Assess
    expect(error).toMatchObject({ reason: 'connection-lost' });
    expect(transport.events).not.toContain('finish');
    expect(summary).toMatchObject({ received: 0, stoppedBecause: 'connection-lost' });
  });

  it.each([true, false])('pull (give-back counts: %s): a copy that fails stops the taking; the prefetched rest goes back untouched', async (giveBackCounts) => {
    // Prepare
    const seen: string[] = [];
    const handler = byId(seen);
    const transport = new MemoryTransport({
      mode: 'pull',
      giveBackCounts,
      config: engineConfig(),
      messages: [delivery('fail'), ...deliveries(2)],
      failCopy: (taken) => (taken.delivery.properties.messageId === 'fail' ? new Error('unroutable') : undefined),
    });
    // Act
    const { summary, error } = await invoke(transport, handler);
    // Assess: the failed copy's original went back (requeued) too.
    expect(error).toBeUndefined();
    expect(seen).toEqual(['fail']);
    expect(transport.settled()).toEqual(['fail retry', 'm-0 give-back', 'm-1 give-back']);
    expect(summary).toMatchObject({ received: 3, retried: 0, requeued: 3, deferred: 0, stoppedBecause: 'publish-failed' });
  });

  it('pull: a message that arrives after a copy failed, before the loop saw it, goes back untried', async () => {
    // Prepare: the copy's confirm fails at 100 ms while the loop waits on a take; a message arrives at 200 ms.
    const seen: string[] = [];
    const handler: Handler = (message) => {
      seen.push(String(message.properties.messageId));
      throw new RetryableError('HTTP 503');
    };
    const transport = new MemoryTransport({
      mode: 'pull',
      config: engineConfig(),
      messages: [delivery('fail')],
      holdCopies: true,
      failCopy: () => new Error('nack'),
    });
    setTimeout(() => transport.confirm(), 100);
    setTimeout(() => transport.arrive(delivery('racing')), 200);
    // Act
    const { summary } = await invoke(transport, handler);
    // Assess
    expect(seen).toEqual(['fail']);
    expect(transport.verdictOf('racing')).toEqual({ kind: 'give-back', why: 'out-of-time' });
    expect(transport.events.indexOf('settle racing give-back')).toBeGreaterThan(transport.events.indexOf('stopTaking'));
    expect(summary).toMatchObject({ received: 2, requeued: 2, stoppedBecause: 'publish-failed', durationMs: 200 });
  });

  it('event: the first unconfirmed copy fails the batch, and no handler starts after it', async () => {
    // Prepare
    const seen: string[] = [];
    const handler = byId(seen);
    const transport = new MemoryTransport({
      mode: 'event',
      config: engineConfig(),
      messages: [delivery('fail'), ...deliveries(2)],
      failCopy: (taken) => (taken.delivery.properties.messageId === 'fail' ? new Error('unroutable') : undefined),
      holdCopies: true,
    });
    // The copy's answer comes at 100 ms: a record holds its turn until then.
    setTimeout(() => transport.confirm(), 100);
    // Act
    const { summary, error } = await invoke(transport, handler);
    // Assess
    expect(error).toMatchObject({ reason: 'publish-failed', cause: { message: 'unroutable' } });
    expect(seen).toEqual(['fail']);
    expect(transport.settled()).toEqual(['fail retry']);
    expect(transport.events).not.toContain('finish');
    expect(summary).toMatchObject({ received: 3, acked: 0, retried: 0, requeued: 0, stoppedBecause: 'publish-failed' });
  });

  it.each(MODES)('%s: stops when the idempotency store failed for three messages in a row, deferring them and the rest', async (mode) => {
    // Prepare
    let runs = 0;
    const guard: IdempotencyGuard = {
      run: async () => {
        runs++;
        throw new IdempotencyStoreError('redis://cache:6379', new Error('ECONNREFUSED'));
      },
      close: async () => undefined,
    };
    const transport = new MemoryTransport({ mode, config: engineConfig(), messages: deliveries(6) });
    // Act
    const { summary, warnings } = await invoke(transport, ok, { idempotency: guard });
    // Assess
    expect(runs).toBe(3);
    expect(transport.settled()).toEqual(['m-0', 'm-1', 'm-2', 'm-3', 'm-4', 'm-5'].map((id) => `${id} defer`));
    expect(transport.verdictOf('m-5')).toMatchObject({ retryNo: 0, delayMs: 1000, why: { name: 'IdempotencyStoreError' } });
    expect(summary).toMatchObject({ received: 6, deferred: 6, breakerOpened: false, stoppedBecause: 'idempotency-store-down' });
    expect(warnings.filter((line) => line.startsWith('idempotency: the store failed for several messages'))).toHaveLength(1);
  });
});

describe('runInvocation: the pause', () => {
  it.each(STREAMS)('%s: a queue whose marker says paused takes nothing', async (mode) => {
    // Prepare
    const untilMs = T0 + 30_000;
    const config = engineConfig();
    const marker = new FakePauseMarker(config.workQueue, untilMs);
    const transport = new MemoryTransport({ mode, config, marker, messages: deliveries(3) });
    const handler = vi.fn(ok);
    // Act
    const { summary } = await invoke(transport, handler);
    // Assess
    expect(handler).not.toHaveBeenCalled();
    expect(marker.reads).toBe(1);
    expect(transport.events).toEqual(['open']);
    expect(transport.leftInQueue).toHaveLength(3);
    expect(summary).toMatchObject({ received: 0, stoppedBecause: 'paused', pausedUntil: new Date(untilMs).toISOString() });
  });

  it("event: a batch that comes within a pause is deferred untried, for the pause's remaining time", async () => {
    // Prepare
    const untilMs = T0 + 30_000;
    const config = engineConfig();
    const transport = new MemoryTransport({ mode: 'event', config, marker: new FakePauseMarker(config.workQueue, untilMs), messages: deliveries(3) });
    const handler = vi.fn(ok);
    // Act
    const { summary } = await invoke(transport, handler);
    // Assess
    expect(handler).not.toHaveBeenCalled();
    expect(transport.settled()).toEqual(['m-0 defer', 'm-1 defer', 'm-2 defer']);
    expect(transport.verdictOf('m-0')).toMatchObject({ delayMs: 30_000, why: { name: 'QueuePaused' } });
    expect(summary).toMatchObject({ received: 3, deferred: 3, acked: 0, stoppedBecause: 'paused', pausedUntil: new Date(untilMs).toISOString() });
  });

  it.each(MODES)('%s: a pause that ends before the stop is waited out: every message is tried, none copied untried', async (mode) => {
    // Prepare: the stop comes at 9 s; the partner asks for 2 s
    const config = engineConfig({ CONCURRENCY: '1' });
    const marker = new FakePauseMarker(config.workQueue);
    const tried: Array<[string, number]> = [];
    const handler: Handler = (message) => {
      tried.push([message.properties.messageId as string, Date.now() - T0]);
      if (message.properties.messageId === 'limited') throw new RetryableError('429', { retryAfterMs: 2000, pauseQueue: true });
    };
    const transport = new MemoryTransport({ mode, config, marker, messages: [delivery('ok'), delivery('limited'), delivery('x'), delivery('y')] });
    // Act
    const { summary, warnings } = await invoke(transport, handler);
    // Assess
    expect(transport.settled()).toEqual(['ok ack', 'limited retry', 'x ack', 'y ack']);
    expect(tried.map(([id]) => id)).toEqual(['ok', 'limited', 'x', 'y']);
    expect(tried[2]![1]).toBeGreaterThanOrEqual(2000);
    expect(marker.writes).toEqual([{ untilMs: T0 + 2000, reason: 'RetryableError', by: config.functionName }]);
    expect(summary).toMatchObject({ acked: 3, retried: 1, deferred: 0, requeued: 0, pausedUntil: new Date(T0 + 2000).toISOString() });
    expect(warnings.filter((line) => line.startsWith('partner asked to slow down'))).toEqual([
      'partner asked to slow down: queue paused until 2026-01-01T00:00:02.000Z, 0 messages deferred, 0 given back untried',
    ]);
  });

  it.each([
    { mode: 'pull', kind: 'defer', deferred: 2, requeued: 0 },
    { mode: 'event', kind: 'defer', deferred: 2, requeued: 0 },
    { mode: 'native', kind: 'give-back', deferred: 0, requeued: 2 },
  ] as const)(
    "$mode: a handler's answer pauses the queue past the stop: the rest goes back untried ($kind), the marker written, the pause said once",
    async ({ mode, kind, deferred, requeued }) => {
      // Prepare
      const config = engineConfig({ CONCURRENCY: '1' });
      const marker = new FakePauseMarker(config.workQueue, undefined, { writeMs: 200 });
      const handler: Handler = (message) => {
        if (message.properties.messageId === 'limited') throw new RetryableError('429', { retryAfterMs: 10_000, pauseQueue: true });
      };
      const transport = new MemoryTransport({ mode, config, marker, messages: [delivery('ok'), delivery('limited'), delivery('x'), delivery('y')] });
      // Act
      const { summary, warnings } = await invoke(transport, handler);
      // Assess
      expect(transport.settled()).toEqual(['ok ack', 'limited retry', `x ${kind}`, `y ${kind}`]);
      expect(transport.verdictOf('limited')).toMatchObject({ delayMs: 10_000 });
      expect(transport.verdictOf('x')).toMatchObject(kind === 'defer' ? { delayMs: 10_000, why: { name: 'QueuePaused' } } : { why: 'paused' });
      expect(marker.writes).toEqual([{ untilMs: T0 + 10_000, reason: 'RetryableError', by: config.functionName }]);
      // The write is waited for before the transport finishes.
      expect(marker.written).toEqual([T0 + 200]);
      expect(transport.timeOf('finish')).toBe(200);
      expect(summary).toMatchObject({ acked: 1, retried: 1, deferred, requeued, stoppedBecause: 'paused', pausedUntil: new Date(T0 + 10_000).toISOString() });
      expect(warnings.filter((line) => line.startsWith('partner asked to slow down'))).toEqual([
        `partner asked to slow down: queue paused until 2026-01-01T00:00:10.000Z, ${deferred} messages deferred, ${requeued} given back untried`,
      ]);
    },
  );

  it('waits for a slow marker write no later than the settle deadline', async () => {
    // Prepare: the write would take a minute; the invocation settles by 9.75 s.
    const config = engineConfig();
    const marker = new FakePauseMarker(config.workQueue, undefined, { writeMs: 60_000 });
    const handler: Handler = () => {
      throw new RetryableError('429', { retryAfterMs: 10_000, pauseQueue: true });
    };
    const transport = new MemoryTransport({ mode: 'pull', config, marker, messages: deliveries(1) });
    // Act
    const { summary } = await invoke(transport, handler);
    // Assess
    expect(marker.writes).toHaveLength(1);
    expect(marker.written).toEqual([]);
    expect(transport.timeOf('finish')).toBe(9750);
    expect(summary).toMatchObject({ retried: 1, stoppedBecause: 'paused' });
  });
});
