import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { decodeEvent } from '../../shared/event/decode-event.js';
import { settleBatch, type SettleBatchOptions } from '../../shared/event/settle-batch.js';
import { PublishError, RetryableError, UnrecoverableError } from '../../shared/errors.js';
import type { Handler } from '../../shared/message/message.js';
import { Tally } from '../../shared/core/tally.js';
import { eventSettings, type ModeSettings } from '../../shared/core/mode-settings.js';
import { eventFor, fakeEventDeps, rmqMessage } from '../fixtures/events.js';
import type { PublishOutcome } from '../helpers/fakes.js';

const SETTINGS: ModeSettings = { copyLimitBytes: undefined, canDefer: true, giveBackCounts: false };
const CONFIG = loadConfig({ WORK_QUEUE: 'orders', MAX_RETRIES: '3', BACKOFF_INITIAL_MS: '1000', BACKOFF_JITTER: '0', CONCURRENCY: '1' });

/** Records for bodies `bodies` on queue `orders` (a body `undecodable` gets data that is not base64). */
function records(bodies: string[]) {
  const messages = bodies.map((body, i) => (body === 'undecodable' ? { ...rmqMessage(''), data: '%%%' } : rmqMessage(body, { messageId: `m-${i}` })));
  return decodeEvent(eventFor({ orders: messages }), CONFIG);
}

/** Runs `settleBatch` with a fake publisher; `budgetMs` from now until the stop, the hard stop 100 ms later. */
async function settle(
  bodies: string[],
  handler: Handler,
  options: { script?: PublishOutcome[]; budgetMs?: number; concurrency?: number; pausedUntil?: number; onPause?: SettleBatchOptions['onPause'] } = {},
) {
  const { deps, publisher, logger } = fakeEventDeps(options.script);
  const tally = new Tally();
  const summary = tally.current;
  const stopAt = Date.now() + (options.budgetMs ?? 5000);
  const result = await settleBatch({
    records: records(bodies),
    handler,
    deps,
    config: { ...CONFIG, concurrency: options.concurrency ?? 1 },
    stopAt,
    hardStopAt: stopAt + 100,
    random: () => 0.5,
    tally,
    settings: SETTINGS,
    pausedUntil: options.pausedUntil,
    onPause: options.onPause,
  });
  return { result, summary, publisher, logger };
}

/** Fails with what the body names: `retry`, `park`, else succeeds. */
const byBody: Handler = (message) => {
  const body = message.body.toString();
  if (body === 'retry') throw new Error('partner down');
  if (body === 'park') throw new UnrecoverableError('bad request');
};

describe('settleBatch: a paused queue', () => {
  it("defers every record untried, for the pause's remaining time, when the batch comes within a pause", async () => {
    // Prepare
    let calls = 0;
    const untilMs = Date.now() + 30_000;
    // Act
    const { summary, publisher } = await settle(
      ['a', 'b', 'c'],
      () => {
        calls++;
      },
      { pausedUntil: untilMs },
    );
    // Assess
    expect(calls).toBe(0);
    expect(summary).toMatchObject({ received: 0, deferred: 3, acked: 0, pausedUntil: new Date(untilMs).toISOString() });
    const delays = publisher.calls.map((c) => Number(/\.delay\.(\d+)ms$/.exec(c.routingKey)?.[1]));
    for (const delayMs of delays) expect(delayMs).toBeGreaterThan(29_000);
  });

  it("defers the rest of the batch once a handler's answer pauses the queue, and says so once", async () => {
    // Prepare
    const paused: number[] = [];
    const handler: Handler = (message) => {
      if (message.body.toString() === 'limited') throw new RetryableError('429', { retryAfterMs: 10_000, pauseQueue: true });
    };
    // Act
    const { summary, logger } = await settle(['ok', 'limited', 'x', 'y'], handler, { onPause: (pause) => paused.push(pause.untilMs) });
    // Assess
    expect(summary).toMatchObject({ acked: 1, retried: 1, deferred: 2 });
    expect(paused).toHaveLength(1);
    expect(logger.entries().filter((e) => String(e.message).startsWith('partner asked to slow down'))).toHaveLength(1);
  });
});

describe('settleBatch', () => {
  it('settles each record once: success, retry, park, and an undecodable one parked without the handler', async () => {
    // Prepare
    const seen: string[] = [];
    const handler: Handler = (message, context) => {
      seen.push(message.body.toString());
      return byBody(message, context);
    };
    // Act
    const { result, summary, publisher } = await settle(['ok', 'retry', 'park', 'undecodable'], handler);
    // Assess
    expect(result).toEqual({ failure: undefined, outOfTime: false, breakerOpened: false });
    expect(seen).toEqual(['ok', 'retry', 'park']);
    expect(summary).toMatchObject({ acked: 1, retried: 1, parked: 2, requeued: 0 });
    expect(publisher.calls.map((c) => c.routingKey)).toEqual(['orders.delay.1000ms', 'orders.parked', 'orders.parked']);
    expect(publisher.calls[2]?.options.headers?.['boomerang-park-reason']).toMatch(/^undecodable event message: data \(the body\) is not valid base64/);
  });

  it('returns the first unconfirmed copy and starts no handler after it', async () => {
    // Prepare
    const seen: string[] = [];
    const handler: Handler = (message, context) => {
      seen.push(message.body.toString());
      return byBody(message, context);
    };
    // Act
    const { result, summary } = await settle(['retry', 'ok', 'ok'], handler, { script: [new PublishError('unroutable', 'returned')] });
    // Assess
    expect(result.failure).toMatchObject({ name: 'PublishError', reason: 'returned' });
    expect(seen).toEqual(['retry']);
    expect(summary).toMatchObject({ acked: 0, retried: 0, requeued: 0 });
  });

  it('when the budget runs out, aborts the running handler and counts its attempt; the untried records go back as they were', async () => {
    // Prepare
    const handler: Handler = (_message, { signal }) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
    // Act
    const { result, summary, publisher } = await settle(['slow', 'never-started', 'never-started'], handler, { budgetMs: 50 });
    // Assess
    expect(result).toEqual({ failure: undefined, outOfTime: true, breakerOpened: false });
    expect(summary).toMatchObject({ retried: 1, requeued: 2, parked: 0 });
    expect(publisher.calls.map((c) => [c.options.messageId, c.routingKey, c.options.headers?.['x-retry-no']])).toEqual([
      ['m-0', 'orders.delay.1000ms', 1],
      ['m-1', 'orders', 0],
      ['m-2', 'orders', 0],
    ]);
  });

  it('counts the attempt of a handler that ignores the abort at the hard stop, and does not count it twice', async () => {
    // Prepare
    let finish: () => void = () => undefined;
    const handler: Handler = () =>
      new Promise<void>((resolve) => {
        finish = resolve;
      });
    // Act
    const { result, summary, publisher } = await settle(['stubborn'], handler, { budgetMs: 20 });
    finish();
    await new Promise((resolve) => setImmediate(resolve));
    // Assess
    expect(result.outOfTime).toBe(true);
    expect(summary).toMatchObject({ retried: 1, requeued: 0, acked: 0 });
    expect(publisher.calls.map((c) => [c.routingKey, c.options.headers?.['x-retry-no']])).toEqual([['orders.delay.1000ms', 1]]);
  });

  it('parks an attempt cut off by the budget once its retries are used up, naming HandlerCutOffError', async () => {
    // Prepare
    const handler: Handler = (_message, { signal }) =>
      new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(Object.assign(new Error('request aborted'), { name: 'AbortError' }))));
    const { deps, publisher } = fakeEventDeps();
    const tally = new Tally();
    const summary = tally.current;
    const stopAt = Date.now() + 20;
    // Act
    await settleBatch({
      records: decodeEvent(eventFor({ orders: [rmqMessage('x', { messageId: 'last', headers: { 'x-retry-no': 3 } })] }), CONFIG),
      handler,
      deps,
      config: CONFIG,
      stopAt,
      hardStopAt: stopAt + 100,
      random: () => 0.5,
      tally,
      settings: SETTINGS,
    });
    // Assess
    expect(summary).toMatchObject({ parked: 1, retried: 0, requeued: 0 });
    expect(publisher.calls[0]?.options.headers).toMatchObject({
      'boomerang-park-reason': 'retries exhausted: 3 of 3 made',
      'boomerang-error-name': 'HandlerCutOffError',
      'boomerang-error-message': 'aborted by the budget: AbortError: request aborted',
    });
  });

  /** Settles `messages` with a handler that notes who it saw; `settings` are the mode's. */
  async function crashLoopBatch(messages: ReturnType<typeof rmqMessage>[], settings: ModeSettings) {
    const seen: string[] = [];
    const handler: Handler = (message) => {
      seen.push(String(message.properties.messageId));
    };
    const { deps, publisher } = fakeEventDeps();
    const tally = new Tally();
    await settleBatch({
      records: decodeEvent(eventFor({ orders: messages }), CONFIG),
      handler,
      deps,
      config: CONFIG,
      stopAt: Date.now() + 5000,
      hardStopAt: Date.now() + 5100,
      random: () => 0.5,
      tally,
      settings,
    });
    return { seen, summary: tally.current, publisher };
  }

  it('parks the first record the broker handed out CRASH_LOOP_LIMIT times without calling the handler, and handles the others', async () => {
    // Prepare
    const messages = [
      rmqMessage('a', { messageId: 'looping', headers: { 'x-delivery-count': 10, 'x-acquired-count': 12 } }),
      rmqMessage('b', { messageId: 'below', headers: { 'x-delivery-count': 9 } }),
      // Returned with the first by each crash: at the limit too, but only the first is taken for the culprit.
      rmqMessage('c', { messageId: 'neighbour', headers: { 'x-delivery-count': 10 } }),
    ];
    // Act
    const { seen, summary, publisher } = await crashLoopBatch(messages, SETTINGS);
    // Assess
    expect(seen).toEqual(['below', 'neighbour']);
    expect(summary).toMatchObject({ parked: 1, acked: 2 });
    expect(publisher.calls.map((c) => [c.options.messageId, c.routingKey])).toEqual([['looping', 'orders.parked']]);
    expect(publisher.calls[0]?.options.headers).toMatchObject({
      'boomerang-park-reason': 'crash loop: delivered 13 times',
      'boomerang-error-name': 'CrashLoopError',
    });
  });

  it.each([
    { label: 'pull-like settings leave it to the handler', settings: SETTINGS, seen: ['looping', 'neighbour'], parked: 0 },
    { label: 'the event settings park it', settings: eventSettings({ delayMode: 'tiers', tierDelaysMs: [1000] }), seen: ['neighbour'], parked: 1 },
  ])('a record 4.3 handed out CRASH_LOOP_LIMIT times after nacks (x-acquired-count alone): $label', async ({ settings, seen: expectedSeen, parked }) => {
    // Prepare: a mapping that nacks after each crash raises only x-acquired-count on 4.3.
    const messages = [
      rmqMessage('a', { messageId: 'looping', headers: { 'x-acquired-count': 10 } }),
      rmqMessage('b', { messageId: 'neighbour', headers: { 'x-acquired-count': 10 } }),
    ];
    // Act
    const { seen, summary, publisher } = await crashLoopBatch(messages, settings);
    // Assess
    expect(seen).toEqual(expectedSeen);
    expect(summary).toMatchObject({ parked, acked: 2 - parked });
    if (parked > 0)
      expect(publisher.calls[0]?.options.headers).toMatchObject({
        'boomerang-park-reason': 'crash loop: delivered 11 times',
        'boomerang-error-name': 'CrashLoopError',
      });
  });

  it('runs at most CONCURRENCY handlers at once', async () => {
    // Prepare
    let running = 0;
    let most = 0;
    const handler: Handler = async () => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
    };
    // Act
    const { summary } = await settle(
      Array.from({ length: 10 }, () => 'ok'),
      handler,
      { concurrency: 3 },
    );
    // Assess
    expect(most).toBe(3);
    expect(summary.acked).toBe(10);
  });
});
