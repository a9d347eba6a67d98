import type { MessageProperties } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { Lifecycle, type LifecycleOptions } from '../../shared/core/attempt.js';
import type { ModeSettings } from '../../shared/core/mode-settings.js';
import type { Pacer } from '../../shared/core/pacer.js';
import { Tally } from '../../shared/core/tally.js';
import { RetryableError } from '../../shared/errors.js';
import type { Delivery } from '../../shared/message/copy-message.js';
import type { Handler } from '../../shared/message/message.js';
import { noMetrics } from '../../shared/observability/metrics.js';
import { recordingLogger } from '../helpers/fakes.js';

const CONFIG = loadConfig({ WORK_QUEUE: 'orders', BACKOFF_INITIAL_MS: '1000', BACKOFF_JITTER: '0', BREAKER_THRESHOLD: '1', CONCURRENCY: '4' });
const ORIGIN = { queue: 'orders' };

function delivery(headers: Record<string, unknown> = {}): Delivery {
  return {
    content: Buffer.from('x'),
    fields: { exchange: '', routingKey: 'orders' },
    properties: { headers, messageId: 'm-1' } as unknown as MessageProperties,
  };
}

/** A pacer whose turns the test gives, one at a time, each with the time it says the start waited. */
function handPacer() {
  const waiting: ((headMs: number | undefined) => void)[] = [];
  const pacer: Pacer = {
    turn: (signal) =>
      new Promise((resolve) => {
        waiting.push(resolve);
        signal.addEventListener('abort', () => resolve(undefined), { once: true });
      }),
    describe: () => ({ limiter: 'share', perSecond: 1, shares: 1 }),
  };
  return { pacer, waiting: () => waiting.length, give: (headMs: number) => waiting.shift()?.(headMs) };
}

function lifecycle(handler: Handler, given: Partial<LifecycleOptions> & { settings?: ModeSettings } = {}) {
  const tally = new Tally();
  const made = new Lifecycle({
    config: CONFIG,
    handler,
    // Native's settings: a deferral delays the message where it is, so what the breaker leaves untried is deferred.
    settings: { copyLimitBytes: undefined, canDefer: true, giveBackCounts: false, givesBackAsIs: true, defersByCopy: false },
    log: recordingLogger('error').log,
    metrics: noMetrics,
    random: () => 0.5,
    tally,
    stopAt: Date.now() + 5000,
    hardStopAt: Date.now() + 6000,
    ...given,
  });
  return { made, tally };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('Lifecycle: the rate limit', () => {
  it('calls the handler only once the pacer gives its turn, and sums what the starts waited as pacedMs', async () => {
    // Prepare
    const { pacer, waiting, give } = handPacer();
    let calls = 0;
    const { made, tally } = lifecycle(
      () => {
        calls++;
      },
      { pacer },
    );
    // Act
    const first = made.attempt(delivery(), ORIGIN);
    const second = made.attempt(delivery(), ORIGIN);
    await turn();
    const before = { calls, waiting: waiting(), pacedMs: tally.current.pacedMs };
    give(0);
    give(37.4);
    const verdicts = await Promise.all([first, second]);
    made.end();
    // Assess
    expect(before).toEqual({ calls: 0, waiting: 2, pacedMs: 0 });
    expect(calls).toBe(2);
    expect(verdicts).toMatchObject([{ kind: 'ack' }, { kind: 'ack' }]);
    expect(tally.current.pacedMs).toBe(37);
  });

  it.each([
    {
      label: "gives back a message whose turn did not come by the budget's stop, untried",
      giveBackCounts: false,
      expected: { kind: 'give-back', why: 'out-of-time' },
    },
    {
      label: 'defers it for the shortest delay where a give-back counts as a delivery (3.x), untried',
      giveBackCounts: true,
      expected: { kind: 'defer', retryNo: 0, delayMs: 0, why: { name: 'OutOfTime' } },
    },
  ])('$label', async ({ giveBackCounts, expected }) => {
    // Prepare
    const { pacer } = handPacer();
    let calls = 0;
    const { made } = lifecycle(
      () => {
        calls++;
      },
      {
        pacer,
        settings: { copyLimitBytes: undefined, canDefer: true, giveBackCounts, givesBackAsIs: !giveBackCounts, defersByCopy: true },
        stopAt: Date.now() + 20,
      },
    );
    // Act
    const verdict = await made.attempt(delivery(), ORIGIN);
    made.end();
    // Assess
    expect(calls).toBe(0);
    expect(verdict).toMatchObject(expected);
  });

  it('lets a message waiting for its turn leave the line at once when the breaker opens, deferred untried', async () => {
    // Prepare: BREAKER_THRESHOLD 1, so the first failure opens it.
    const { pacer, waiting, give } = handPacer();
    let calls = 0;
    const { made } = lifecycle(
      () => {
        calls++;
        throw new RetryableError('HTTP 503');
      },
      { pacer },
    );
    const first = made.attempt(delivery(), ORIGIN);
    const second = made.attempt(delivery({ 'x-retry-no': 1 }), ORIGIN);
    await turn();
    // Act: only the first gets its turn.
    give(0);
    await first;
    const verdict = await second;
    made.end();
    // Assess
    expect(calls).toBe(1);
    expect(waiting()).toBe(1);
    expect(verdict).toMatchObject({ kind: 'defer', retryNo: 1, delayMs: 2000, why: { name: 'CircuitBreakerOpen' } });
  });

  it('defers, untried, a message whose turn came as the lifecycle stopped', async () => {
    // Prepare: the second's turn is given in the same turn of the event loop as the first fails.
    const { pacer, give } = handPacer();
    let calls = 0;
    const { made } = lifecycle(
      () => {
        calls++;
        throw new RetryableError('HTTP 503');
      },
      { pacer },
    );
    const first = made.attempt(delivery(), ORIGIN);
    const second = made.attempt(delivery(), ORIGIN);
    await turn();
    // Act
    give(0);
    give(0);
    const verdicts = await Promise.all([first, second]);
    made.end();
    // Assess
    expect(calls).toBe(1);
    expect(verdicts[1]).toMatchObject({ kind: 'defer', why: { name: 'CircuitBreakerOpen' } });
  });

  it('asks no pacer and writes no pacedMs without a rate limit', async () => {
    // Prepare
    const { made, tally } = lifecycle(() => undefined);
    // Act
    const verdict = await made.attempt(delivery(), ORIGIN);
    made.end();
    // Assess
    expect(verdict).toMatchObject({ kind: 'ack' });
    expect(tally.current).not.toHaveProperty('pacedMs');
  });
});
