import { describe, expect, it, vi } from 'vitest';
import { RetryableError } from '../../shared/errors.js';
import type { Handler } from '../../shared/message/message.js';
import { NativeAnnotation } from '../../shared/native/native-annotations.js';
import {
  balanced,
  byId,
  deliveries,
  delivery,
  engineConfig,
  invoke,
  MemoryTransport,
  MemoryTransportError,
  MODES,
  T0,
  useFakeClock,
} from '../helpers/memory-transport.js';

useFakeClock();

/** An attempt time limit past the invocation's stop: the budget, not the limit, cuts these handlers off. */
const PAST_THE_STOP = '900000';

/** A handler that ignores its signal and returns only when the test says; `calls` counts its runs. */
function stubborn() {
  const finishers: Array<() => void> = [];
  const handler: Handler = () =>
    new Promise<void>((resolve) => {
      finishers.push(resolve);
    });
  const finishAll = (): void => {
    for (const finish of finishers) finish();
  };
  return { handler, finishAll, calls: () => finishers.length };
}

/** A handler that rejects with `error` as soon as its signal aborts, and otherwise never returns. */
function abortable(error: () => Error): Handler {
  return (_message, { signal }) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(error())));
}

describe('runInvocation: the end sequence', () => {
  it('pull: defers the prefetched messages untried once the breaker opened, while the flow still runs, then stops it, finishes and closes', async () => {
    // Prepare
    const transport = new MemoryTransport({ mode: 'pull', config: engineConfig({ BREAKER_THRESHOLD: '1' }), messages: deliveries(3) });
    // Act
    await invoke(transport, () => Promise.reject(new RetryableError('HTTP 503')));
    // Assess
    expect(transport.events).toEqual([
      'open',
      'settle m-0 retry',
      'takeBuffered',
      'settle m-1 defer',
      'settle m-2 defer',
      'takeBuffered',
      'stopTaking',
      'finish',
      'close',
      'completed',
    ]);
  });

  it.each([
    { mode: 'pull', giveBackCounts: true, kind: 'defer', afterStop: false },
    { mode: 'pull', giveBackCounts: false, kind: 'give-back', afterStop: true },
    { mode: 'event', giveBackCounts: false, kind: 'give-back', afterStop: true },
    { mode: 'native', giveBackCounts: false, kind: 'give-back', afterStop: true },
  ] as const)('$mode (give-back counts: $giveBackCounts): out of time, what no handler saw is $kind', async ({ mode, giveBackCounts, kind, afterStop }) => {
    // Prepare: one handler at a time, each till its signal aborts: the first holds the whole budget.
    const config = engineConfig({ CONCURRENCY: '1', BREAKER_THRESHOLD: '0', ATTEMPT_TIMEOUT_MS: PAST_THE_STOP });
    const transport = new MemoryTransport({ mode, giveBackCounts, config, messages: deliveries(3) });
    // Act
    const { summary } = await invoke(
      transport,
      abortable(() => new Error('aborted')),
    );
    // Assess
    expect(transport.settled().sort()).toEqual(['m-0 retry', `m-1 ${kind}`, `m-2 ${kind}`]);
    if (kind === 'defer') expect(transport.verdictOf('m-1')).toMatchObject({ retryNo: 0, delayMs: 0, why: { name: 'OutOfTime' } });
    else expect(transport.verdictOf('m-1')).toEqual({ kind: 'give-back', why: 'out-of-time' });
    expect(transport.events.indexOf(`settle m-1 ${kind}`) > transport.events.indexOf('stopTaking')).toBe(afterStop);
    expect(summary).toMatchObject({ received: 3, retried: 1, stoppedBecause: 'budget' });
    expect(balanced(summary)).toBe(true);
  });

  it.each([
    { mode: 'pull', giveBackCounts: true },
    { mode: 'pull', giveBackCounts: false },
    { mode: 'native', giveBackCounts: false },
  ] as const)('$mode (give-back counts: $giveBackCounts): what arrives after the flow stopped goes back untouched', async ({ mode, giveBackCounts }) => {
    // Prepare
    const seen: string[] = [];
    const transport = new MemoryTransport({ mode, giveBackCounts, config: engineConfig(), messages: deliveries(2) });
    transport.arriveWhileStopping(delivery('late-1'), delivery('late-2'));
    // Act
    const { summary, warnings } = await invoke(transport, byId(seen));
    // Assess
    expect(seen).toEqual(['m-0', 'm-1']);
    expect(transport.events.slice(transport.events.indexOf('stopTaking'))).toEqual([
      'stopTaking',
      'settle late-1 give-back',
      'settle late-2 give-back',
      'finish',
      'close',
      'completed',
    ]);
    expect(transport.verdictOf('late-1')).toEqual({ kind: 'give-back', why: 'out-of-time' });
    expect(summary).toMatchObject({ received: 4, acked: 2, requeued: 2, stoppedBecause: 'idle' });
    expect(warnings).toContain('messages not settled in time went back to their queue as they were');
  });

  it.each([
    { mode: 'pull', giveBackCounts: true, atRisk: 'defer' },
    { mode: 'pull', giveBackCounts: false, atRisk: 'give-back' },
    { mode: 'native', giveBackCounts: false, atRisk: 'give-back' },
  ] as const)(
    '$mode (give-back counts: $giveBackCounts): a late arrival one more give-back would bring to CRASH_LOOP_LIMIT is $atRisk',
    async ({ mode, giveBackCounts, atRisk }) => {
      // Prepare: "at-risk" was returned once already; with a limit of 2 a second return would park it untried
      const transport = new MemoryTransport({ mode, giveBackCounts, config: engineConfig({ CRASH_LOOP_LIMIT: '2' }), messages: deliveries(1) });
      transport.arriveWhileStopping(delivery('at-risk', { 'x-delivery-count': 1 }), delivery('fresh'));
      // Act
      const { summary } = await invoke(transport, byId([]));
      // Assess
      expect(transport.settled()).toEqual(['m-0 ack', `at-risk ${atRisk}`, 'fresh give-back']);
      if (atRisk === 'defer') expect(transport.verdictOf('at-risk')).toMatchObject({ retryNo: 0, delayMs: 0, why: { name: 'OutOfTime' } });
      expect(summary).toMatchObject({ received: 3, acked: 1, deferred: atRisk === 'defer' ? 1 : 0, requeued: atRisk === 'defer' ? 1 : 2 });
      expect(balanced(summary)).toBe(true);
    },
  );

  it.each(MODES)('%s: a handler that ignores its signal is cut off at the hard stop: its attempt counts, once', async (mode) => {
    // Prepare
    const { handler, finishAll, calls } = stubborn();
    const transport = new MemoryTransport({
      mode,
      config: engineConfig({ ATTEMPT_TIMEOUT_MS: PAST_THE_STOP }),
      messages: [delivery('stuck', { 'x-retry-no': 1, [NativeAnnotation.retryNo]: 1 })],
    });
    // Act
    const { summary } = await invoke(transport, handler);
    finishAll();
    await vi.advanceTimersByTimeAsync(60_000);
    // Assess
    expect(calls()).toBe(1);
    expect(transport.settles).toEqual([
      {
        id: 'stuck',
        at: T0 + 9500,
        verdict: expect.objectContaining({ kind: 'retry', retryNo: 1, nextRetryNo: 2, error: expect.objectContaining({ name: 'HandlerCutOffError' }) }),
      },
    ]);
    expect(transport.verdictOf('stuck')).toMatchObject({ error: { message: 'still running at the hard stop' } });
    expect(summary).toMatchObject({ received: 1, retried: 1, acked: 0, stoppedBecause: 'budget' });
  });

  it('pull: waits for a copy still unconfirmed until the settle deadline, then gives its original back', async () => {
    // Prepare: the retry's copy is never confirmed.
    const transport = new MemoryTransport({ mode: 'pull', config: engineConfig(), messages: [delivery('fail'), delivery('ok')], holdCopies: true });
    // Act
    const { summary, warnings } = await invoke(transport, byId());
    // Assess
    expect(transport.timeOf('stopTaking')).toBe(9750);
    expect(transport.givenBackAtFinish).toEqual(['fail']);
    expect(summary).toMatchObject({ received: 2, acked: 1, retried: 0, requeued: 1, stoppedBecause: 'idle' });
    expect(warnings).toContain('messages not settled in time went back to their queue as they were');
  });

  it('pull: a copy confirmed before the settle deadline ends the wait at once', async () => {
    // Prepare
    const transport = new MemoryTransport({ mode: 'pull', config: engineConfig(), messages: [delivery('fail')], holdCopies: true });
    setTimeout(() => transport.confirm(), 3000);
    // Act
    const { summary, warnings } = await invoke(transport, byId());
    // Assess
    expect(transport.timeOf('stopTaking')).toBe(3000);
    expect(transport.givenBackAtFinish).toEqual([]);
    expect(summary).toMatchObject({ retried: 1, requeued: 0, durationMs: 3000 });
    expect(warnings).not.toContain('messages not settled in time went back to their queue as they were');
  });

  it('finishes with the deadlines it opened with, and the summary gets the parking lot depth', async () => {
    // Prepare
    const transport = new MemoryTransport({ mode: 'pull', config: engineConfig(), messages: deliveries(1) });
    // Act
    const { summary } = await invoke(transport, byId());
    // Assess
    expect(transport.deadlines).toEqual({ stopTakingAt: T0 + 9000, hardStopAt: T0 + 9500, settleBy: T0 + 9750 });
    expect(transport.events.slice(-3)).toEqual(['finish', 'close', 'completed']);
    expect(summary.parkedDepth).toBe(0);
  });

  it("throws the transport's error, with the summary, when finishing failed; the transport is closed all the same", async () => {
    // Prepare
    const transport = new MemoryTransport({ mode: 'pull', config: engineConfig(), messages: deliveries(2), finishFails: new Error('channel closed') });
    // Act
    const { summary, error } = await invoke(transport, byId());
    // Assess
    expect(error).toBeInstanceOf(MemoryTransportError);
    expect(error).toMatchObject({ message: 'Invocation ended early: channel closed', reason: 'connection-lost', summary });
    expect(transport.events.slice(-3)).toEqual(['finish', 'close', 'failed']);
    expect(summary).toMatchObject({ acked: 2, stoppedBecause: 'connection-lost' });
  });

  it('throws what the transport says when it completed without a failure (pull: a copy came back unroutable)', async () => {
    // Prepare
    const transport = new MemoryTransport({
      mode: 'pull',
      config: engineConfig(),
      messages: deliveries(2),
      completed: (summary) => new MemoryTransportError('a copy came back unroutable', 'publish-failed', summary),
    });
    // Act
    const { summary, error } = await invoke(transport, byId());
    // Assess
    expect(error).toMatchObject({ message: 'a copy came back unroutable', summary: expect.objectContaining({ acked: 2, durationMs: 500 }) });
    expect(transport.events.slice(-3)).toEqual(['finish', 'close', 'completed']);
    expect(summary.parkedDepth).toBe(0);
  });
});

describe('runInvocation: an event batch (the cases of the former settleBatch)', () => {
  it('settles each record once: success, retry, park, and an undecodable one parked without the handler', async () => {
    // Prepare
    const seen: string[] = [];
    const config = engineConfig({ CONCURRENCY: '1' });
    const undecodable = { delivery: delivery('undecodable'), origin: { queue: 'orders', problem: 'data (the body) is not valid base64' } };
    const transport = new MemoryTransport({ mode: 'event', config, messages: [delivery('ok'), delivery('fail'), delivery('bad'), undecodable] });
    // Act
    const { summary } = await invoke(transport, byId(seen));
    // Assess
    expect(seen).toEqual(['ok', 'fail', 'bad']);
    expect(transport.settled()).toEqual(['ok ack', 'fail retry', 'bad park', 'undecodable park']);
    expect(transport.verdictOf('undecodable')).toMatchObject({
      reason: 'undecodable event message: data (the body) is not valid base64',
      error: { name: 'EventDecodeError' },
    });
    expect(summary).toMatchObject({ received: 4, acked: 1, retried: 1, parked: 2, requeued: 0 });
  });

  it('when the budget runs out, aborts the running handler and counts its attempt; the untried records go back as they were', async () => {
    // Prepare
    const config = engineConfig({ CONCURRENCY: '1', ATTEMPT_TIMEOUT_MS: PAST_THE_STOP });
    const transport = new MemoryTransport({ mode: 'event', config, messages: [delivery('slow'), delivery('never-1'), delivery('never-2')] });
    // Act
    const { summary } = await invoke(
      transport,
      abortable(() => new Error('aborted')),
    );
    // Assess
    expect(transport.settled()).toEqual(['slow retry', 'never-1 give-back', 'never-2 give-back']);
    expect(transport.verdictOf('slow')).toMatchObject({ retryNo: 0, nextRetryNo: 1, delayMs: 1000 });
    expect(summary).toMatchObject({ retried: 1, requeued: 2, parked: 0 });
  });

  it('parks an attempt cut off by the budget once its retries are used up, naming HandlerCutOffError', async () => {
    // Prepare
    const aborted = (): Error => Object.assign(new Error('request aborted'), { name: 'AbortError' });
    const transport = new MemoryTransport({
      mode: 'event',
      config: engineConfig({ ATTEMPT_TIMEOUT_MS: PAST_THE_STOP }),
      messages: [delivery('last', { 'x-retry-no': 3 })],
    });
    // Act
    const { summary } = await invoke(transport, abortable(aborted));
    // Assess
    expect(summary).toMatchObject({ parked: 1, retried: 0, requeued: 0 });
    expect(transport.verdictOf('last')).toMatchObject({
      kind: 'park',
      reason: 'retries exhausted: 3 of 3 made',
      error: { name: 'HandlerCutOffError', message: 'aborted by the budget: AbortError: request aborted' },
    });
  });

  it('parks the first record the broker handed out CRASH_LOOP_LIMIT times, saying how often it really was', async () => {
    // Prepare
    const seen: string[] = [];
    const messages = [
      delivery('looping', { 'x-delivery-count': 10, 'x-acquired-count': 12 }),
      delivery('below', { 'x-delivery-count': 9 }),
      delivery('neighbour', { 'x-delivery-count': 10 }),
    ];
    const transport = new MemoryTransport({ mode: 'event', config: engineConfig(), messages });
    // Act
    const { summary } = await invoke(transport, byId(seen));
    // Assess
    expect(seen).toEqual(['below', 'neighbour']);
    expect(transport.verdictOf('looping')).toMatchObject({ kind: 'park', reason: 'crash loop: delivered 13 times', error: { name: 'CrashLoopError' } });
    expect(summary).toMatchObject({ parked: 1, acked: 2 });
  });
});
