import type { MessageProperties } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { Lifecycle, type LifecycleOptions } from '../../shared/core/attempt.js';
import type { ModeSettings } from '../../shared/core/mode-settings.js';
import type { Pacer } from '../../shared/core/pacer.js';
import type { PauseStart } from '../../shared/amqp/pause-marker.js';
import { Pause } from '../../shared/core/pause.js';
import { Tally } from '../../shared/core/tally.js';
import type { Verdict } from '../../shared/core/verdict.js';
import { IdempotencyInProgressError, IdempotencyStoreError, RetryableError, UnrecoverableError } from '../../shared/errors.js';
import type { IdempotencyGuard, IdempotencyOutcome } from '../../shared/idempotency/guard.js';
import type { Delivery } from '../../shared/message/copy-message.js';
import type { Handler } from '../../shared/message/message.js';
import { noMetrics } from '../../shared/observability/metrics.js';
import { recordingLogger } from '../helpers/fakes.js';

const CONFIG = loadConfig({
  WORK_QUEUE: 'orders',
  MAX_RETRIES: '3',
  BACKOFF_INITIAL_MS: '1000',
  BACKOFF_JITTER: '0',
  BREAKER_THRESHOLD: '2',
  CONCURRENCY: '4',
  CRASH_LOOP_LIMIT: '10',
});
const PULL: ModeSettings = { copyLimitBytes: 100, canDefer: true, giveBackCounts: false, givesBackAsIs: true, defersByCopy: true };
const ORIGIN = { queue: 'orders' };
const DEFERRED_FOR_BREAKER = { kind: 'defer', retryNo: 1, delayMs: 2000, why: { name: 'CircuitBreakerOpen' } };

function delivery(headers: Record<string, unknown> = {}, body = 'x'): Delivery {
  return {
    content: Buffer.from(body),
    fields: { exchange: '', routingKey: 'orders' },
    properties: { headers, messageId: 'm-1' } as unknown as MessageProperties,
  };
}

/** A guard that answers each run with `answer`: an outcome (running the work unless a duplicate), or an error it throws. */
function fakeGuard(answer: IdempotencyOutcome | Error): IdempotencyGuard {
  return {
    async run(_message, work) {
      if (answer instanceof Error) throw answer;
      if (answer !== 'duplicate') await work();
      return answer;
    },
    close: async () => undefined,
  };
}

/** `pausedUntil`: an earlier invocation's marker; `onPause`: told each pause marked (a fake marker's writes). */
type Given = Partial<LifecycleOptions> & { readonly pausedUntil?: number; readonly onPause?: (pause: PauseStart) => void };

function lifecycle(handler: Handler, given: Given = {}) {
  const logger = recordingLogger('warn');
  const now = Date.now();
  const { pausedUntil, onPause, ...options } = given;
  const tally = options.tally ?? new Tally();
  const markerOf =
    onPause === undefined ? undefined : (queue: string) => ({ queue, read: async () => undefined, write: async (pause: PauseStart) => onPause(pause) });
  const made = new Lifecycle({
    config: CONFIG,
    handler,
    settings: PULL,
    log: logger.log,
    metrics: noMetrics,
    random: () => 0.5,
    tally,
    stopAt: now + 5000,
    hardStopAt: now + 6000,
    pause: new Pause({ pausedUntil, markerOf, by: 'f', log: logger.log, tally }),
    ...options,
  });
  const warnings = (): string[] =>
    logger
      .entries()
      .filter((e) => e.level === 'warn')
      .map((e) => String(e.msg ?? e.message));
  return { lifecycle: made, warnings };
}

const ok: Handler = () => undefined;
const throws =
  (error: unknown): Handler =>
  () => {
    throw error;
  };
const partnerDown = new RetryableError('HTTP 503');
const storeDown = new IdempotencyStoreError('redis://cache:6379', new Error('ECONNREFUSED'));

type Case = {
  readonly name: string;
  readonly handler: Handler;
  readonly headers?: Record<string, unknown>;
  readonly body?: string;
  readonly guard?: IdempotencyGuard;
  readonly settings?: ModeSettings;
  readonly problem?: string;
  readonly expected: Partial<Verdict> & Record<string, unknown>;
};

const CASES: readonly Case[] = [
  { name: 'acks a success', handler: ok, expected: { kind: 'ack', unkeyed: false } },
  {
    name: 'acks a guarded success of a message without a key, marked unkeyed',
    handler: ok,
    guard: fakeGuard('no-key'),
    expected: { kind: 'ack', unkeyed: true },
  },
  {
    name: 'skips a duplicate the guard recognised',
    handler: throws(new Error('never called')),
    guard: fakeGuard('duplicate'),
    expected: { kind: 'duplicate' },
  },
  {
    name: 'retries a retryable failure with the next count and its backoff',
    handler: throws(partnerDown),
    headers: { 'x-retry-no': 1 },
    expected: { kind: 'retry', retryNo: 1, nextRetryNo: 2, delayMs: 2000 },
  },
  {
    name: 'waits at least Retry-After',
    handler: throws(Object.assign(new Error('429'), { retryAfterMs: 7000 })),
    expected: { kind: 'retry', nextRetryNo: 1, delayMs: 7000 },
  },
  {
    name: 'parks an unrecoverable error',
    handler: throws(new UnrecoverableError('bad request')),
    expected: { kind: 'park', reason: 'unrecoverable error UnrecoverableError', copyable: true },
  },
  {
    name: 'parks once the retries are spent',
    handler: throws(partnerDown),
    headers: { 'x-retry-no': 3 },
    expected: { kind: 'park', retryNo: 3, reason: 'retries exhausted: 3 of 3 made' },
  },
  {
    name: 'parks a crash loop without calling the handler',
    handler: throws(new Error('never called')),
    headers: { 'x-delivery-count': 10 },
    expected: { kind: 'park', reason: 'crash loop: delivered 11 times', error: expect.objectContaining({ name: 'CrashLoopError' }) },
  },
  {
    name: 'parks an undecodable record without calling the handler',
    handler: throws(new Error('never called')),
    problem: 'data is not base64',
    expected: { kind: 'park', reason: 'undecodable event message: data is not base64', error: expect.objectContaining({ name: 'EventDecodeError' }) },
  },
  {
    name: 'parks a failed message too large to copy, marked for the broker to move',
    handler: throws(partnerDown),
    body: 'x'.repeat(101),
    expected: { kind: 'park', copyable: false, reason: expect.stringMatching(/^too large to copy: the body is 101 bytes, over MAX_MESSAGE_BYTES \(100\)/) },
  },
  { name: 'acks a success too large to copy', handler: ok, body: 'x'.repeat(101), expected: { kind: 'ack' } },
  {
    name: 'retries a large message when the mode has no copy limit',
    handler: throws(partnerDown),
    body: 'x'.repeat(101),
    settings: { ...PULL, copyLimitBytes: undefined },
    expected: { kind: 'retry' },
  },
  {
    name: 'defers a message whose key another run holds, same count, as untried',
    handler: ok,
    headers: { 'x-retry-no': 2 },
    guard: fakeGuard(new IdempotencyInProgressError('k')),
    expected: { kind: 'defer', retryNo: 2, delayMs: 4000, why: expect.objectContaining({ name: 'IdempotencyInProgressError' }) },
  },
  {
    name: 'defers a message when the store fails',
    handler: ok,
    guard: fakeGuard(storeDown),
    expected: { kind: 'defer', retryNo: 0, why: expect.objectContaining({ name: 'IdempotencyStoreError' }) },
  },
  {
    name: 'gives back a refused message when there is no delay path',
    handler: ok,
    guard: fakeGuard(storeDown),
    settings: { ...PULL, canDefer: false },
    expected: { kind: 'give-back', why: 'no-delay-path' },
  },
  {
    name: 'gives back a refused message too large to copy',
    handler: ok,
    body: 'x'.repeat(101),
    guard: fakeGuard(storeDown),
    expected: { kind: 'give-back', why: 'too-large' },
  },
];

describe('Lifecycle#attempt', () => {
  it.each(CASES)('$name', async ({ handler, headers, body, guard, settings, problem, expected }) => {
    // Prepare
    const { lifecycle: made } = lifecycle(handler, { guard, settings: settings ?? PULL });
    // Act
    const verdict = await made.attempt(delivery(headers, body), { ...ORIGIN, problem });
    made.end();
    // Assess
    expect(verdict).toMatchObject(expected);
  });

  it('counts an attempt the budget cut off, naming HandlerCutOffError', async () => {
    // Prepare
    const handler: Handler = (_message, { signal }) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
    // A limit past the stop: the budget cuts it off first.
    const { lifecycle: made } = lifecycle(handler, { stopAt: Date.now() + 10, config: { ...CONFIG, attemptTimeoutMs: 900_000 } });
    // Act
    const verdict = await made.attempt(delivery(), ORIGIN);
    made.end();
    // Assess
    expect(verdict).toMatchObject({ kind: 'retry', nextRetryNo: 1, error: { name: 'HandlerCutOffError', message: 'aborted by the budget: Error: aborted' } });
  });

  it('gives a handler still running at the hard stop its verdict once, and its late outcome settles nothing', async () => {
    // Prepare
    let finish: () => void = () => undefined;
    const { lifecycle: made } = lifecycle(
      () =>
        new Promise<void>((resolve) => {
          finish = resolve;
        }),
    );
    const attempt = made.attempt(delivery(), ORIGIN);
    await new Promise((resolve) => setImmediate(resolve));
    // Act
    const cut = made.cutOffRunning();
    finish();
    // Assess
    expect(cut).toHaveLength(1);
    expect(cut[0]?.[1]).toMatchObject({ kind: 'retry', error: { name: 'HandlerCutOffError', message: 'still running at the hard stop' } });
    expect(await attempt).toBeUndefined();
    expect(made.cutOffRunning()).toEqual([]);
    made.end();
  });
});

describe('Lifecycle: the breaker', () => {
  it('probes one at a time, runs CONCURRENCY after a success, and opens after BREAKER_THRESHOLD retryable failures in a row', async () => {
    // Prepare
    let fail = false;
    const { lifecycle: made, warnings } = lifecycle(() => {
      if (fail) throw partnerDown;
    });
    // Act, Assess
    expect(made.concurrency).toBe(1);
    await made.attempt(delivery(), ORIGIN);
    expect(made.concurrency).toBe(4);
    fail = true;
    await made.attempt(delivery(), ORIGIN);
    expect(made.stop).toBeUndefined();
    await made.attempt(delivery(), ORIGIN);
    expect(made.stop).toBe('breaker-open');
    expect(made.concurrency).toBe(0);
    expect(made.breakerOpened).toBe(true);
    expect(warnings()).toContain('circuit breaker opened: no more handler calls in this invocation; untried messages go back with their retry count');
    made.end();
  });

  it('counts attempts that outlast their time limit as failures of the partner: retried with HandlerTimeoutError, and the breaker opens', async () => {
    // Prepare: every call hangs, ignoring its signal; a 20 ms limit
    const { lifecycle: made } = lifecycle(() => new Promise<void>(() => undefined), { config: { ...CONFIG, attemptTimeoutMs: 20 } });
    // Act
    const first = await made.attempt(delivery(), ORIGIN);
    const second = await made.attempt(delivery(), ORIGIN);
    // Assess
    expect(first).toMatchObject({ kind: 'retry', nextRetryNo: 1, error: { name: 'HandlerTimeoutError', retryable: true } });
    expect(second).toMatchObject({ kind: 'retry', error: { name: 'HandlerTimeoutError' } });
    expect(made.stop).toBe('breaker-open');
    made.end();
  });

  it('does not count an unrecoverable failure toward the breaker', async () => {
    // Prepare
    const { lifecycle: made } = lifecycle(throws(new UnrecoverableError('bad')));
    // Act
    for (let i = 0; i < 3; i++) await made.attempt(delivery(), ORIGIN);
    // Assess
    expect(made.stop).toBeUndefined();
    made.end();
  });

  it.each([
    { mode: 'pull before 4.3 (a give-back counts)', settings: { ...PULL, giveBackCounts: true, givesBackAsIs: false }, expected: DEFERRED_FOR_BREAKER },
    { mode: 'pull on 4.3 (a give-back counts nothing, a deferral copies)', settings: PULL, expected: { kind: 'give-back', why: 'breaker-open' } },
    { mode: 'native (a deferral is no copy)', settings: { ...PULL, defersByCopy: false }, expected: DEFERRED_FOR_BREAKER },
  ])('sends back, untried, a message whose turn came after the breaker opened: $mode', async ({ settings, expected }) => {
    // Prepare
    let calls = 0;
    const { lifecycle: made } = lifecycle(
      () => {
        calls++;
        throw partnerDown;
      },
      { settings },
    );
    await made.attempt(delivery(), ORIGIN);
    await made.attempt(delivery(), ORIGIN);
    // Act
    const verdict = await made.attempt(delivery({ 'x-retry-no': 1 }), ORIGIN);
    // Assess
    expect(calls).toBe(2);
    expect(verdict).toMatchObject(expected);
    made.end();
  });
});

describe('Lifecycle: a partner\'s "slow down" pauses the queue', () => {
  const slowDown = (retryAfterMs?: number): RetryableError => new RetryableError('HTTP 429', { retryAfterMs, pauseQueue: true });
  /** Before 4.3 a give-back raises x-delivery-count: what a pause leaves untried waits it out on the delay path. */
  const COUNTING: ModeSettings = { ...PULL, giveBackCounts: true, givesBackAsIs: false };

  it('stops while a pause past the stop holds, and defers what it is handed untried where a give-back counts, for the remaining time, its count kept', async () => {
    // Prepare
    const tally = new Tally();
    const pauses: PauseStart[] = [];
    const { lifecycle: made, warnings } = lifecycle(throws(slowDown(60_000)), { tally, settings: COUNTING, onPause: (pause) => pauses.push(pause) });
    const before = Date.now();
    // Act
    const answered = await made.attempt({ ...delivery(), properties: { headers: {}, messageId: 'got-429' } as unknown as MessageProperties }, ORIGIN);
    const held = made.untried(delivery({ 'x-retry-no': 2 }), ORIGIN);
    const later = await made.attempt(delivery(), ORIGIN);
    made.end();
    // Assess: the message that got the answer was tried: retried with its delay
    expect(answered).toMatchObject({ kind: 'retry', nextRetryNo: 1, delayMs: 60_000 });
    expect(made.stop).toBe('paused');
    expect(held).toMatchObject({ kind: 'defer', retryNo: 2, why: { name: 'QueuePaused', retryable: true } });
    expect((held as { delayMs: number }).delayMs).toBeGreaterThan(59_000);
    expect((held as { delayMs: number }).delayMs).toBeLessThanOrEqual(60_000);
    expect(later).toMatchObject({ kind: 'defer', retryNo: 0, why: { name: 'QueuePaused' } });
    expect(pauses).toEqual([{ untilMs: expect.any(Number), queue: 'orders', errorName: 'RetryableError', messageId: 'got-429' }]);
    expect(pauses[0]!.untilMs - before).toBeGreaterThanOrEqual(60_000);
    expect(tally.current.pausedUntil).toBe(new Date(pauses[0]!.untilMs).toISOString());
    expect(warnings()).toEqual([`partner asked to slow down: queue paused until ${tally.current.pausedUntil}, 2 messages deferred, 0 given back untried`]);
  });

  it('gives back, never copies, what a pause past the stop leaves untried where a give-back counts nothing (4.3, native)', async () => {
    // Prepare
    const tally = new Tally();
    const { lifecycle: made, warnings } = lifecycle(throws(slowDown(60_000)), { tally });
    // Act
    await made.attempt(delivery(), ORIGIN);
    const held = made.untried(delivery({ 'x-retry-no': 2 }), ORIGIN);
    const later = await made.attempt(delivery(), ORIGIN);
    made.end();
    // Assess
    expect(made.stop).toBe('paused');
    expect(held).toEqual({ kind: 'give-back', why: 'paused' });
    expect(later).toEqual({ kind: 'give-back', why: 'paused' });
    expect(warnings()).toEqual([`partner asked to slow down: queue paused until ${tally.current.pausedUntil}, 0 messages deferred, 2 given back untried`]);
  });

  it('waits out a pause that ends before the stop: what it holds is tried after the pause, and the pause is no stop', async () => {
    // Prepare
    const calledAt: number[] = [];
    const tally = new Tally();
    const { lifecycle: made } = lifecycle(
      () => {
        calledAt.push(Date.now());
        if (calledAt.length === 1) throw slowDown(40);
      },
      { tally },
    );
    // Act: the second and third are handed over while the pause holds
    const first = await made.attempt(delivery(), ORIGIN);
    const during = made.stop;
    const held = await Promise.all([made.attempt(delivery(), ORIGIN), made.attempt(delivery(), ORIGIN)]);
    made.end();
    // Assess: both were tried, once the pause was over (a timer never fires early)
    expect(first).toMatchObject({ kind: 'retry' });
    expect(during).toBeUndefined();
    expect(held).toEqual([
      { kind: 'ack', unkeyed: false },
      { kind: 'ack', unkeyed: false },
    ]);
    const pausedUntil = Date.parse(tally.current.pausedUntil as string);
    expect(calledAt.slice(1).every((at) => at >= pausedUntil)).toBe(true);
  });

  it('stops waiting when a handler still running extends the pause past the stop: the held message goes back untried', async () => {
    // Prepare: one handler answers "slow down" for 50 ms at once, a slower one for a minute later
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    let calls = 0;
    const { lifecycle: made } = lifecycle(async () => {
      calls++;
      if (calls === 1) {
        await answered;
        throw slowDown(60_000);
      }
      throw slowDown(50);
    });
    // Act
    const slow = made.attempt(delivery(), ORIGIN);
    await made.attempt(delivery(), ORIGIN);
    const waiting = made.attempt(delivery(), ORIGIN);
    answer();
    const [held] = await Promise.all([waiting, slow]);
    made.end();
    // Assess
    expect(calls).toBe(2);
    expect(made.stop).toBe('paused');
    expect(held).toEqual({ kind: 'give-back', why: 'paused' });
  });

  it('waits out a pause that came while a start waited for its rate-limit turn, and takes a new turn after it', async () => {
    // Prepare: the second start's turn is granted only when the test says, after the first handler's
    // "slow down" (100 ms, well before the stop) paused the queue
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    let grant: () => void = () => undefined;
    const turns: number[] = [];
    const pacer: Pacer = {
      turn: () => {
        turns.push(Date.now());
        if (turns.length !== 2) return Promise.resolve(0);
        return new Promise((resolve) => {
          grant = () => resolve(0);
        });
      },
      describe: () => ({ limiter: 'share', perSecond: 5, shares: 1 }),
    };
    const starts: number[] = [];
    const tally = new Tally();
    const { lifecycle: made } = lifecycle(
      async () => {
        starts.push(Date.now());
        if (starts.length === 1) {
          await answered;
          throw slowDown(100);
        }
      },
      { pacer, tally },
    );
    // Act
    const first = made.attempt(delivery(), ORIGIN);
    const second = made.attempt(delivery(), ORIGIN);
    answer();
    await first;
    grant();
    const verdict = await second;
    made.end();
    // Assess: the second handler started after the pause, on a turn taken after it
    const pausedUntil = Date.parse(tally.current.pausedUntil ?? '');
    expect(verdict).toEqual({ kind: 'ack', unkeyed: false });
    expect(starts).toHaveLength(2);
    expect(starts[1]).toBeGreaterThanOrEqual(pausedUntil);
    expect(turns).toHaveLength(3);
    expect(turns[2]).toBeGreaterThanOrEqual(pausedUntil);
  });

  it('counts a "slow down" toward the breaker as no outage: the pause answers it', async () => {
    // Prepare: the breaker opens at 2 retryable failures in a row (CONFIG)
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const { lifecycle: made } = lifecycle(async () => {
      await answered;
      throw slowDown(60_000);
    });
    // Act: three handlers running at once, each answered "slow down"
    const running = [made.attempt(delivery(), ORIGIN), made.attempt(delivery(), ORIGIN), made.attempt(delivery(), ORIGIN)];
    answer();
    const verdicts = await Promise.all(running);
    made.end();
    // Assess
    expect(verdicts.map((v) => v?.kind)).toEqual(['retry', 'retry', 'retry']);
    expect(made.breakerOpened).toBe(false);
    expect(made.stop).toBe('paused');
  });

  it('opens the breaker on retryable failures that do not pause', async () => {
    // Prepare
    const { lifecycle: made } = lifecycle(throws(new RetryableError('HTTP 503')));
    // Act
    await made.attempt(delivery(), ORIGIN);
    await made.attempt(delivery(), ORIGIN);
    made.end();
    // Assess
    expect(made.breakerOpened).toBe(true);
  });

  it('is extended by a later pause and never shortened; the mode is told only when it grows', async () => {
    // Prepare
    const answers = [slowDown(10_000), slowDown(2000), slowDown(30_000)];
    const pauses: PauseStart[] = [];
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const { lifecycle: made } = lifecycle(
      async () => {
        await answered;
        throw answers.shift();
      },
      { settings: COUNTING, onPause: (pause) => pauses.push(pause) },
    );
    // Act: three handlers running at once, each answered "slow down"
    const running = [made.attempt(delivery(), ORIGIN), made.attempt(delivery(), ORIGIN), made.attempt(delivery(), ORIGIN)];
    answer();
    await Promise.all(running);
    const held = made.untried(delivery(), ORIGIN);
    made.end();
    // Assess
    expect(pauses).toHaveLength(2);
    expect(pauses[1]!.untilMs - pauses[0]!.untilMs).toBeGreaterThanOrEqual(20_000 - 50);
    expect((held as { delayMs: number }).delayMs).toBeGreaterThan(29_000);
  });

  it('pauses for the retry delay when the error gives no retryAfterMs, and for a pausing rule', async () => {
    // Prepare: the stop comes before the 4 s pause ends
    const config = loadConfig({
      WORK_QUEUE: 'orders',
      BACKOFF_INITIAL_MS: '1000',
      BACKOFF_JITTER: '0',
      RETRY_RULES: '[{"match":{"errorName":"RateLimited"},"pauseQueue":true}]',
    });
    const limited = Object.assign(new Error('429'), { name: 'RateLimited' });
    const { lifecycle: made } = lifecycle(throws(limited), { config, settings: COUNTING, stopAt: Date.now() + 1000 });
    // Act
    await made.attempt(delivery({ 'x-retry-no': 2 }), ORIGIN);
    const held = made.untried(delivery(), ORIGIN);
    made.end();
    // Assess: retry 3 waits 4 s, and so does the queue
    expect((held as { delayMs: number }).delayMs).toBeGreaterThan(3900);
    expect((held as { delayMs: number }).delayMs).toBeLessThanOrEqual(4000);
  });

  it("starts paused when an earlier invocation's marker says so: nothing is tried, the summary says until when, and nothing is logged", async () => {
    // Prepare
    const tally = new Tally();
    let calls = 0;
    const untilMs = Date.now() + 5000;
    const { lifecycle: made, warnings } = lifecycle(
      () => {
        calls++;
      },
      { tally, pausedUntil: untilMs, settings: COUNTING, stopAt: Date.now() + 1000 },
    );
    // Act
    const verdict = await made.attempt(delivery(), ORIGIN);
    made.end();
    // Assess
    expect(calls).toBe(0);
    expect(verdict).toMatchObject({
      kind: 'defer',
      why: { name: 'QueuePaused', message: `not tried: the queue is paused until ${new Date(untilMs).toISOString()} (the partner asked to slow down)` },
    });
    expect(tally.current.pausedUntil).toBe(new Date(untilMs).toISOString());
    expect(warnings()).toEqual([]);
  });

  it('lets handlers run again once the pause is over, and ignores a marker already past', async () => {
    // Prepare
    const tally = new Tally();
    let calls = 0;
    const { lifecycle: made } = lifecycle(
      () => {
        calls++;
        if (calls === 1) throw slowDown(30);
      },
      { tally, pausedUntil: Date.now() - 1, stopAt: Date.now() + 20 },
    );
    // Act
    await made.attempt(delivery(), ORIGIN);
    const during = made.stop;
    // Out of the 30 ms pause, which is what is under test (a timer never fires early; load only adds).
    await new Promise((resolve) => setTimeout(resolve, 40));
    const after = await made.attempt(delivery(), ORIGIN);
    made.end();
    // Assess
    expect(during).toBe('paused');
    expect(made.stop).toBeUndefined();
    expect(after).toMatchObject({ kind: 'ack' });
    expect(calls).toBe(2);
  });

  it('gives a held message back when there is no delay path to defer it to', async () => {
    // Prepare
    const { lifecycle: made } = lifecycle(throws(slowDown(60_000)), { settings: { ...COUNTING, canDefer: false } });
    // Act
    await made.attempt(delivery(), ORIGIN);
    // Assess
    expect(made.untried(delivery(), ORIGIN)).toEqual({ kind: 'give-back', why: 'no-delay-path' });
    made.end();
  });
});

describe('Lifecycle: the store-failure streak', () => {
  it('stops after three store failures in a row, and a key held elsewhere (the store answered) resets the streak', async () => {
    // Prepare
    let answer: Error = storeDown;
    const guard: IdempotencyGuard = {
      run: async () => {
        throw answer;
      },
      close: async () => undefined,
    };
    const { lifecycle: made, warnings } = lifecycle(ok, { guard });
    // Act, Assess
    await made.attempt(delivery(), ORIGIN);
    await made.attempt(delivery(), ORIGIN);
    answer = new IdempotencyInProgressError('k');
    await made.attempt(delivery(), ORIGIN);
    answer = storeDown;
    await made.attempt(delivery(), ORIGIN);
    await made.attempt(delivery(), ORIGIN);
    expect(made.stop).toBeUndefined();
    await made.attempt(delivery(), ORIGIN);
    expect(made.stop).toBe('idempotency-store-down');
    expect(warnings().filter((m) => m.includes('several messages in a row'))).toHaveLength(1);
    // Pull on 4.3: back to its queue as it was; where a give-back counts, deferred
    expect(made.untried(delivery(), ORIGIN)).toEqual({ kind: 'give-back', why: 'idempotency-store-down' });
    made.end();
  });

  it('defers what the store being down leaves untried where a give-back counts (before 4.3)', async () => {
    // Prepare
    const guard: IdempotencyGuard = {
      run: async () => {
        throw storeDown;
      },
      close: async () => undefined,
    };
    const { lifecycle: made } = lifecycle(ok, { guard, settings: { ...PULL, giveBackCounts: true, givesBackAsIs: false } });
    // Act
    for (let i = 0; i < 3; i++) await made.attempt(delivery(), ORIGIN);
    // Assess
    expect(made.stop).toBe('idempotency-store-down');
    expect(made.untried(delivery(), ORIGIN)).toMatchObject({ kind: 'defer', why: { name: 'IdempotencyStoreError' } });
    made.end();
  });

  it('stays down for the invocation when a run already under way succeeds with the store afterwards', async () => {
    // Prepare: the first run's handler is under way until released; the next three meet a failed store
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let calls = 0;
    const guard: IdempotencyGuard = {
      run: async (_message, work) => {
        if (++calls > 1) throw storeDown;
        await work();
        return 'ran';
      },
      close: async () => undefined,
    };
    const { lifecycle: made } = lifecycle(() => released, { guard });
    const first = made.attempt(delivery(), ORIGIN);
    for (let i = 0; i < 3; i++) await made.attempt(delivery(), ORIGIN);
    // Act
    release();
    const verdict = await first;
    // Assess
    expect(verdict).toMatchObject({ kind: 'ack' });
    expect(made.stop).toBe('idempotency-store-down');
    made.end();
  });

  it('starts no handler of a run whose key was claimed before the store went down: it goes back untried, as the messages not taken yet', async () => {
    // Prepare: the first run holds its claim until released; the next three meet a failed store
    let release: () => void = () => undefined;
    let calls = 0;
    let handled = 0;
    const guard: IdempotencyGuard = {
      run: async (_message, work) => {
        if (++calls > 1) throw storeDown;
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        await work();
        return 'ran';
      },
      close: async () => undefined,
    };
    const { lifecycle: made } = lifecycle(
      () => {
        handled += 1;
      },
      { guard },
    );
    const first = made.attempt(delivery(), ORIGIN);
    for (let i = 0; i < 3; i++) await made.attempt(delivery(), ORIGIN);
    // Act
    release();
    const verdict = await first;
    // Assess
    expect(verdict).toEqual({ kind: 'give-back', why: 'idempotency-store-down' });
    expect(handled).toBe(0);
    made.end();
  });
});

describe('Lifecycle#untried', () => {
  it.each([
    { name: 'gives back a message the invocation had no time for', settings: PULL, expected: { kind: 'give-back', why: 'out-of-time' } },
    {
      name: 'defers it for the shortest delay where a give-back would raise x-delivery-count',
      settings: { ...PULL, giveBackCounts: true, givesBackAsIs: false },
      expected: { kind: 'defer', retryNo: 0, delayMs: 0, why: { name: 'OutOfTime' } },
    },
    {
      name: 'gives it back anyway when there is no delay path',
      settings: { ...PULL, giveBackCounts: true, givesBackAsIs: false, canDefer: false },
      expected: { kind: 'give-back', why: 'out-of-time' },
    },
  ])('$name', ({ settings, expected }) => {
    // Prepare
    const { lifecycle: made } = lifecycle(ok, { settings });
    // Act
    const verdict = made.untried(delivery(), ORIGIN, true);
    made.end();
    // Assess
    expect(verdict).toMatchObject(expected);
  });
});
