import { describe, expect, it } from 'vitest';
import { pauseMarkerQueue } from '../../shared/amqp/pause-marker.js';
import type { Config } from '../../shared/config/config.js';
import { RetryableError } from '../../shared/errors.js';
import { runEvent } from '../../shared/event/run-event.js';
import type { Handler } from '../../shared/message/message.js';
import { silentLogger } from '../helpers/fakes.js';
import type { Summary } from '../../shared/observability/summary.js';
import { sleep, type TestBroker, uniqueName } from '../helpers/broker.js';
import { BROKER_VERSION, NATIVE_BROKER } from '../helpers/broker-version.js';
import { CLOCK_SLACK_MS, publishJson, pullOnce, pullUntil, setUpTopology, testConfig, total } from '../helpers/engine.js';
import { useTestBroker } from '../helpers/topology.js';
import { eventFor, rmqMessage } from '../fixtures/events.js';

const testBroker = useTestBroker();

/**
 * What the partner asks: long enough for a second invocation to fall inside it on a busy machine. The
 * tests' policy caps a pause at BACKOFF_MAX_MS, raised to fit it.
 */
const PAUSE_MS = 4000;
const POLICY = { BACKOFF_MAX_MS: '6400' };
/** A budget whose stop (at 2.5 s, SAFETY_MARGIN_MS being 500) comes before PAUSE_MS ends: the pause stops the invocation. */
const SHORT_BUDGET_MS = 3000;
/** A pause that ends well before the stop of the default 5 s budget (at 4.5 s): it is waited out. */
const SHORT_PAUSE_MS = 1000;

type Call = { readonly id: string; readonly retryNo: number; readonly at: number; readonly answer: 'ok' | 'slow-down' };

/** A handler whose partner says "slow down" (for `pauseMs`) to its first call only; it records every call. */
function partnerSlowingDownOnce(pauseMs = PAUSE_MS): { handler: Handler; calls: Call[] } {
  const calls: Call[] = [];
  const handler: Handler = async (message) => {
    const call = { id: String(message.properties.messageId), retryNo: message.retryNo, at: Date.now() };
    // Long enough for the prefetch to bring the whole batch before the answer comes.
    await sleep(50);
    if (calls.length === 0) {
      calls.push({ ...call, answer: 'slow-down' });
      throw new RetryableError('partner answered 429', { retryAfterMs: pauseMs, pauseQueue: true });
    }
    calls.push({ ...call, answer: 'ok' });
  };
  return { handler, calls };
}

async function publishAll(broker: TestBroker, config: Config, ids: readonly string[]): Promise<void> {
  for (const id of ids) publishJson(broker, config.workQueue, { id }, { messageId: id });
  await broker.holds(config.workQueue, ids.length);
}

const ids = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

describe.each([
  ['pull', {}, true],
  ['native pull', { DELAY_MODE: 'native' }, NATIVE_BROKER],
])(`a partner's "slow down" pauses the queue: %s on RabbitMQ ${BROKER_VERSION}`, (mode, env, runs) => {
  it.runIf(runs)('waits out a pause that ends before the stop: every message it holds is tried after the pause, none copied untried', async () => {
    // Prepare
    const broker = testBroker();
    const config = testConfig({ BATCH_SIZE: '20', ...POLICY, ...env });
    await setUpTopology(broker, config);
    await publishAll(broker, config, ids('held', 10));
    const { handler, calls } = partnerSlowingDownOnce(SHORT_PAUSE_MS);

    // Act
    const summary = await pullOnce(config, handler);

    // Assess: the nine held were tried in the same invocation, after the pause; nothing went back untried
    expect(summary).toMatchObject({ retried: 1, parked: 0, deferred: 0, requeued: 0 });
    const pausedUntil = Date.parse(summary.pausedUntil ?? '');
    const held = calls.filter((c) => c.answer === 'ok' && c.retryNo === 0);
    expect(held.map((c) => c.id).sort()).toEqual(
      ids('held', 10)
        .filter((id) => id !== calls[0]!.id)
        .sort(),
    );
    expect(Math.min(...held.map((c) => c.at))).toBeGreaterThanOrEqual(pausedUntil - CLOCK_SLACK_MS);
  });

  it.runIf(runs)(
    'sends back what the invocation holds when the pause outlasts its stop (given back where that counts nothing, else deferred for the rest of the pause); the next invocation within it takes nothing; after it every message is handled once',
    async () => {
      // Prepare
      const broker = testBroker();
      const config = testConfig({ BATCH_SIZE: '20', ...POLICY, ...env });
      await setUpTopology(broker, config);
      await publishAll(broker, config, ids('first', 10));
      const { handler, calls } = partnerSlowingDownOnce();

      // Act: the first invocation hears "slow down" from the partner, for longer than it has
      const first = await pullOnce(config, handler, SHORT_BUDGET_MS);

      // Assess: one call (the breaker's probe), the rest held and sent back untried, the marker written
      expect(calls).toHaveLength(1);
      expect(first).toMatchObject({ received: 10, retried: 1, acked: 0, parked: 0, stoppedBecause: 'paused' });
      // Deliveries the prefetch brought after the loop stopped go back untouched; the next invocations leave them be.
      expect(first.deferred + first.requeued).toBe(9);
      // Before 4.3 a give-back raises x-delivery-count: there a copy keeps the crash-loop count honest.
      if (mode === 'pull' && broker.giveBackCounts) expect(first.deferred).toBeGreaterThan(0);
      else expect(first.deferred).toBe(0);
      const pausedUntil = Date.parse(first.pausedUntil ?? '');
      expect(pausedUntil - calls[0]!.at).toBeGreaterThanOrEqual(PAUSE_MS);
      expect(await broker.messageCount(pauseMarkerQueue(config.workQueue))).toBe(1);

      // Act: within the pause, fresh messages arrive and the next invocation runs
      await publishAll(broker, config, ids('fresh', 2));
      const waiting = await broker.messageCount(config.workQueue);
      const second = await pullOnce(config, handler);

      // Assess: it took nothing, and left the work queue as it was
      expect(Date.now()).toBeLessThan(pausedUntil);
      expect(second).toMatchObject({ received: 0, stoppedBecause: 'paused', pausedUntil: first.pausedUntil });
      expect(calls).toHaveLength(1);
      expect(await broker.messageCount(config.workQueue)).toBe(waiting);

      // Act: invocations go on, as scheduled, until every message was handled
      const after = await pullUntil(config, handler, () => new Set(calls.filter((c) => c.answer === 'ok').map((c) => c.id)).size === 12, 20_000);

      // Assess: no handler started within the pause; each message handled once, none parked; the deferred ones spent no attempt
      const later = calls.slice(1);
      expect(Math.min(...later.map((c) => c.at))).toBeGreaterThanOrEqual(pausedUntil - CLOCK_SLACK_MS);
      expect(later.map((c) => c.id).sort()).toEqual([...ids('first', 10), ...ids('fresh', 2)].sort());
      expect(later.filter((c) => c.retryNo > 0)).toEqual([expect.objectContaining({ id: calls[0]!.id, retryNo: 1 })]);
      expect(total([first, second, ...after]).parked).toBe(0);
    },
  );

  it.runIf(runs)('says paused, not idle, when the answer comes after the queue went idle', async () => {
    // Prepare: one message, whose partner answers after IDLE_TIMEOUT_MS (150 ms): the loop stops taking, idle, first
    // (no breaker, so no probe holds the loop until the answer)
    const broker = testBroker();
    const config = testConfig({ ...POLICY, ...env, BREAKER_THRESHOLD: '0' });
    await setUpTopology(broker, config);
    await publishAll(broker, config, ['late']);
    const handler: Handler = async () => {
      await sleep(600);
      throw new RetryableError('partner answered 429', { retryAfterMs: PAUSE_MS, pauseQueue: true });
    };
    // Act
    const summary = await pullOnce(config, handler, SHORT_BUDGET_MS);
    // Assess
    expect(summary).toMatchObject({ received: 1, retried: 1, stoppedBecause: 'paused' });
    expect(summary.pausedUntil).toBeDefined();
  });
});

describe(`a partner's "slow down" pauses the queue: event mode on RabbitMQ ${BROKER_VERSION}`, () => {
  const invoke = (config: Config, event: unknown, handler: Handler, budgetMs = SHORT_BUDGET_MS): Promise<Summary> =>
    runEvent({ config, handler, event, budgetMs, log: silentLogger });

  it('waits out a pause that ends before the stop: the rest of the batch is tried after it, none copied untried', async () => {
    // Prepare
    const broker = testBroker();
    const config = testConfig({ WORK_QUEUE: uniqueName('work'), FUNCTION_NAME: 'boomerang-event', ...POLICY });
    await setUpTopology(broker, config);
    const { handler, calls } = partnerSlowingDownOnce(SHORT_PAUSE_MS);
    const event = eventFor({ [config.workQueue]: ['a', 'b', 'c'].map((id) => rmqMessage(id, { messageId: id })) });
    // Act
    const summary = await invoke(config, event, handler, 5000);
    // Assess
    expect(calls.map((c) => [c.id, c.answer])).toEqual([
      ['a', 'slow-down'],
      ['b', 'ok'],
      ['c', 'ok'],
    ]);
    expect(summary).toMatchObject({ received: 3, retried: 1, acked: 2, deferred: 0, requeued: 0 });
    expect(calls[1]!.at).toBeGreaterThanOrEqual(Date.parse(summary.pausedUntil ?? '') - CLOCK_SLACK_MS);
    await broker.drain(config.workQueue, 1, 20_000);
  });

  it('defers the rest of the batch; a batch delivered within the pause is deferred at once, untried, and every copy comes back', async () => {
    // Prepare
    const broker = testBroker();
    const config = testConfig({ WORK_QUEUE: uniqueName('work'), FUNCTION_NAME: 'boomerang-event', ...POLICY });
    await setUpTopology(broker, config);
    const { handler, calls } = partnerSlowingDownOnce();
    const batch = (names: readonly string[]) => eventFor({ [config.workQueue]: names.map((id) => rmqMessage(id, { messageId: id })) });

    // Act
    const first = await invoke(config, batch(['a', 'b', 'c']), handler);
    const second = await invoke(config, batch(['d', 'e']), handler);

    // Assess
    expect(calls.map((c) => c.id)).toEqual(['a']);
    expect(first).toMatchObject({ received: 3, retried: 1, deferred: 2, stoppedBecause: 'paused' });
    expect(second).toMatchObject({ received: 2, deferred: 2, retried: 0, acked: 0, stoppedBecause: 'paused', pausedUntil: first.pausedUntil });
    const back = await broker.drain(config.workQueue, 5, 20_000);
    const retryNoOf = new Map(back.map((m) => [m.properties.messageId as string, m.properties.headers?.['x-retry-no']]));
    expect([...retryNoOf.keys()].sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(retryNoOf.get('a')).toBe(1);
    for (const id of ['b', 'c', 'd', 'e']) expect(retryNoOf.get(id) ?? 0, id).toBe(0);
  });
});
