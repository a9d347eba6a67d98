import { describe, expect, it } from 'vitest';
import type { Config } from '../../shared/config/config.js';
import { runPull } from '../../shared/pull/pull.js';
import type { Summary } from '../../shared/observability/summary.js';
import { EventBatchError } from '../../shared/core/invocation-errors.js';
import { runEvent } from '../../shared/event/run-event.js';
import type { IdempotencyGuard } from '../../shared/idempotency/guard.js';
import type { Handler } from '../../shared/message/message.js';
import { sleep, uniqueName } from '../helpers/broker.js';
import { publishJson, setUpTopology, testConfig, total } from '../helpers/engine.js';
import { recordingLogger } from '../helpers/fakes.js';
import { countedWork, dynamoDbKind, message, REMAINING_MS, redisKind, useIdempotencyStore } from '../helpers/idempotency-stores.js';
import { useTestBroker } from '../helpers/topology.js';
import { eventFor, rmqMessage } from '../fixtures/events.js';

const testBroker = useTestBroker();

/** A handler that records each effect by messageId; `failFirst` ids throw on their first call (before any effect). */
function recordingHandler(failFirst: readonly string[] = []) {
  const effects: string[] = [];
  const calls: string[] = [];
  const handler: Handler = async (m) => {
    const id = String(m.properties.messageId);
    calls.push(id);
    if (failFirst.includes(id) && calls.filter((c) => c === id).length === 1) throw new Error('partner answered 503');
    effects.push(id);
  };
  return { handler, effects, calls };
}

const countOf = (ids: readonly string[], id: string): number => ids.filter((x) => x === id).length;

describe.each([redisKind(), dynamoDbKind()])('the engine with idempotency on ($name)', (kind) => {
  const log = recordingLogger('warn');
  const { guard, fixture } = useIdempotencyStore(kind, log.log);

  const pull = (config: Config, handler: Handler, idempotency: IdempotencyGuard, budgetMs = 3000): Promise<Summary> =>
    runPull({ config, handler, budgetMs, log: log.log, idempotency });

  /** Pulls as a scheduler would until `done(totals so far)`. */
  async function pullUntil(
    config: Config,
    handler: Handler,
    idempotency: IdempotencyGuard,
    done: (sum: ReturnType<typeof total>) => boolean,
  ): Promise<Summary[]> {
    const summaries: Summary[] = [];
    const deadline = Date.now() + 15_000;
    while (!done(total(summaries)) && Date.now() < deadline) {
      summaries.push(await pull(config, handler, idempotency));
      if (!done(total(summaries))) await sleep(50);
    }
    if (!done(total(summaries))) throw new Error(`condition not met; totals: ${JSON.stringify(total(summaries))}`);
    return summaries;
  }

  describe('pull mode', () => {
    it('runs the handler once for the same message published twice, and counts the second as a skipped duplicate', async () => {
      // Prepare
      const broker = testBroker();
      const config = testConfig();
      await setUpTopology(broker, config);
      const recorder = recordingHandler();
      const g = guard();
      publishJson(broker, config.workQueue, { n: 1 }, { messageId: 'twice' });
      publishJson(broker, config.workQueue, { n: 1 }, { messageId: 'twice' });
      // Act: the second copy is a duplicate at once, or deferred while the first holds the key and a duplicate when back.
      const summaries = await pullUntil(config, recorder.handler, g, (sum) => sum.skippedDuplicates === 1);
      // Assess
      expect(recorder.effects).toEqual(['twice']);
      expect(total(summaries)).toMatchObject({ acked: 1, skippedDuplicates: 1, parked: 0, lost: 0 });
      for (const s of summaries) expect(s.received).toBe(s.acked + s.retried + s.parked + s.requeued + s.lost + s.deferred + s.skippedDuplicates);
    });

    it('a message that fails once then succeeds on retry has its effect once, also when it arrives again', async () => {
      // Prepare
      const broker = testBroker();
      const config = testConfig();
      await setUpTopology(broker, config);
      const recorder = recordingHandler(['flaky']);
      const g = guard();
      publishJson(broker, config.workQueue, { n: 1 }, { messageId: 'flaky' });
      // Act: the failure leaves no completed record, so its retry runs; then a duplicate arrives
      const first = await pullUntil(config, recorder.handler, g, () => recorder.effects.length === 1);
      publishJson(broker, config.workQueue, { n: 1 }, { messageId: 'flaky' });
      await pullUntil(config, recorder.handler, g, (sum) => sum.skippedDuplicates === 1);
      // Assess
      expect(countOf(recorder.calls, 'flaky')).toBe(2);
      expect(recorder.effects).toEqual(['flaky']);
      expect(total(first)).toMatchObject({ retried: 1, acked: 1, parked: 0 });
    });

    it('defers, without running or parking it, a message whose key another run holds; it is a duplicate once that run completed', async () => {
      // Prepare
      const broker = testBroker();
      const config = testConfig();
      await setUpTopology(broker, config);
      const recorder = recordingHandler();
      const elsewhere = countedWork(true);
      const holding = guard().run(message('held'), elsewhere.run, REMAINING_MS);
      await elsewhere.running;
      publishJson(broker, config.workQueue, { n: 1 }, { messageId: 'held', headers: { 'x-retry-no': 1 } });
      // Act
      const whileHeld = await pull(config, recorder.handler, guard());
      elsewhere.release();
      await holding;
      await pullUntil(config, recorder.handler, guard(), (sum) => sum.skippedDuplicates === 1);
      // Assess
      expect(whileHeld).toMatchObject({ received: 1, deferred: 1, parked: 0, retried: 0, breakerOpened: false });
      expect(recorder.calls).toEqual([]);
      expect(elsewhere.runs).toBe(1);
      expect(log.entries().some((e) => e.message === "idempotency: another run holds the message's key; deferred" && e.key === 'held')).toBe(true);
      expect(await fixture().records()).toBe(1);
    });

    it('defers every message it took while the store is down (those arriving after the stop go back untried), says why, stops after 3 failures in a row, and handles each once when it is back', async () => {
      // Prepare
      const broker = testBroker();
      const config = testConfig({ CONCURRENCY: '1' });
      await setUpTopology(broker, config);
      const recorder = recordingHandler();
      const ids = ['d1', 'd2', 'd3', 'd4', 'd5'];
      for (const id of ids) publishJson(broker, config.workQueue, { id }, { messageId: id });
      // The publishes are not confirmed: wait until the queue holds them all, so that the invocation
      // while the store is down has every message to take.
      await broker.holds(config.workQueue, ids.length, 10_000);
      const down = guard({ store: await kind.refusing() });
      // Act
      const whileDown = await pull(config, recorder.handler, down);
      const after = await pullUntil(config, recorder.handler, guard(), () => recorder.effects.length === ids.length);
      // Assess: what the prefetch brought by the stop is deferred; a delivery the broker's frames brought
      // after it (a loaded machine reads the socket late) is given back untouched. Both are untried.
      expect(whileDown).toMatchObject({ stoppedBecause: 'idempotency-store-down', parked: 0, acked: 0, lost: 0, breakerOpened: false });
      expect(whileDown.deferred + whileDown.requeued).toBe(whileDown.received);
      expect(whileDown.deferred).toBeGreaterThanOrEqual(3);
      expect(recorder.calls.slice().sort()).toEqual(ids);
      expect(total(after)).toMatchObject({ parked: 0, lost: 0 });
      const warning = log.entries().find((e) => e.message === 'idempotency: the store failed; message deferred' && ids.includes(String(e.messageId)));
      expect(String(warning?.store)).toMatch(kind.name === 'redis' ? /^redis:\/\/127\.0\.0\.1:\d+/ : /^dynamodb:never-reached/);
      expect(String(warning?.reason)).toMatch(/The idempotency store .* failed/);
    });

    it('runs at most CONCURRENCY handlers at once, while the store calls of the next messages overlap them', async () => {
      // Prepare
      const broker = testBroker();
      const config = testConfig({ CONCURRENCY: '3' });
      await setUpTopology(broker, config);
      const ids = Array.from({ length: 12 }, (_, i) => `slot-${i}`);
      for (const id of ids) publishJson(broker, config.workQueue, { id }, { messageId: id });
      await broker.holds(config.workQueue, ids.length, 10_000);
      let running = 0;
      let most = 0;
      const effects: string[] = [];
      const handler: Handler = async (m) => {
        running += 1;
        most = Math.max(most, running);
        await sleep(30);
        effects.push(String(m.properties.messageId));
        running -= 1;
      };
      // Act
      const summary = await pull(config, handler, guard());
      // Assess: the limit is reached and never passed; each message ran once and its key completed
      expect(most).toBe(3);
      expect(effects.slice().sort()).toEqual(ids.slice().sort());
      expect(summary).toMatchObject({ received: 12, acked: 12, skippedDuplicates: 0 });
      expect(await fixture().records()).toBe(12);
    });

    it('gives back untried, its key released, a claimed message whose handler slot never came before the breaker opened', async () => {
      // Prepare: one slot; the first message's failure opens the breaker while the second waits for the slot
      const broker = testBroker();
      const config = testConfig({ CONCURRENCY: '1', BREAKER_THRESHOLD: '1' });
      await setUpTopology(broker, config);
      publishJson(broker, config.workQueue, { n: 1 }, { messageId: 'opens' });
      publishJson(broker, config.workQueue, { n: 2 }, { messageId: 'waits' });
      await broker.holds(config.workQueue, 2, 10_000);
      const calls: string[] = [];
      const handler: Handler = async (m) => {
        calls.push(String(m.properties.messageId));
        await sleep(50);
        throw new Error('partner answered 503');
      };
      // Act
      const summary = await pull(config, handler, guard());
      // Assess: one attempt; the other is deferred with the count it came with, and no key stays held
      // Untried: deferred with its count where a give-back would count toward the crash-loop limit (before
      // 4.3), else given back as it was (on 4.3 it may come back and be given back again before the stop).
      expect(summary).toMatchObject({ retried: 1, parked: 0, lost: 0, breakerOpened: true });
      expect(summary.deferred + summary.requeued).toBe(summary.received - 1);
      expect(summary.deferred + summary.requeued).toBeGreaterThanOrEqual(1);
      expect(calls).toEqual(['opens']);
      expect(await fixture().records()).toBe(0);
    });

    it('acks a message without a messageId by running the handler unguarded, and counts it', async () => {
      // Prepare
      const broker = testBroker();
      const config = testConfig();
      await setUpTopology(broker, config);
      let runs = 0;
      publishJson(broker, config.workQueue, { n: 1 });
      // Act
      const summary = await pull(
        config,
        () => {
          runs += 1;
        },
        guard(),
      );
      // Assess
      expect(summary).toMatchObject({ received: 1, acked: 1, withoutIdempotencyKey: 1, skippedDuplicates: 0 });
      expect(runs).toBe(1);
      expect(await fixture().records()).toBe(0);
    });
  });

  describe('event mode', () => {
    const invoke = (config: Config, event: unknown, handler: Handler, idempotency: IdempotencyGuard): Promise<Summary> =>
      runEvent({ config, handler, event, budgetMs: 5000, log: log.log, idempotency });

    it('re-runs none of the messages already handled when the batch comes back after an unconfirmed copy', async () => {
      // Prepare: a queue with no delay path makes its retry copy unroutable, so the batch fails
      const broker = testBroker();
      const config = testConfig({ WORK_QUEUE: uniqueName('work') });
      await setUpTopology(broker, config);
      const unknown = uniqueName('no-topology');
      // The invocation reads its pause marker, which declares `<unknown>.pause`.
      broker.trackQueue(unknown);
      // The invocation reads its pause marker, which declares `<unknown>.pause`.
      broker.trackQueue(unknown);
      const recorder = recordingHandler(['r1']);
      const event = eventFor({
        [config.workQueue]: [rmqMessage('a', { messageId: 'a1' }), rmqMessage('b', { messageId: 'b1' })],
        [unknown]: [rmqMessage('r', { messageId: 'r1' })],
      });
      const g = guard();
      // Act
      const failed = await invoke(config, event, recorder.handler, g).catch((e: unknown) => e);
      const again = await invoke(config, event, recorder.handler, g);
      // Assess
      expect(failed).toBeInstanceOf(EventBatchError);
      expect(again).toMatchObject({ received: 3, skippedDuplicates: 2, acked: 1, retried: 0 });
      expect([countOf(recorder.effects, 'a1'), countOf(recorder.effects, 'b1'), countOf(recorder.effects, 'r1')]).toEqual([1, 1, 1]);
      expect(countOf(recorder.calls, 'r1')).toBe(2);
    });

    it('runs the handler once for the same message twice in a batch', async () => {
      // Prepare
      const broker = testBroker();
      const config = testConfig({ CONCURRENCY: '1' });
      await setUpTopology(broker, config);
      const recorder = recordingHandler();
      const event = eventFor({ [config.workQueue]: [rmqMessage('x', { messageId: 'dup' }), rmqMessage('x', { messageId: 'dup' })] });
      // Act
      const summary = await invoke(config, event, recorder.handler, guard());
      // Assess
      expect(summary).toMatchObject({ received: 2, acked: 1, skippedDuplicates: 1 });
      expect(recorder.effects).toEqual(['dup']);
    });

    it('sends a record whose key another run holds to the delay path with the retry count it had, untried', async () => {
      // Prepare
      const broker = testBroker();
      const config = testConfig();
      await setUpTopology(broker, config);
      const recorder = recordingHandler();
      const elsewhere = countedWork(true);
      const holding = guard().run(message('held-e'), elsewhere.run, REMAINING_MS);
      await elsewhere.running;
      const event = eventFor({ [config.workQueue]: [rmqMessage('x', { messageId: 'held-e', headers: { 'x-retry-no': 2 } })] });
      // Act
      const summary = await invoke(config, event, recorder.handler, guard());
      elsewhere.release();
      await holding;
      // Assess
      expect(summary).toMatchObject({ received: 1, deferred: 1, parked: 0, retried: 0 });
      expect(recorder.calls).toEqual([]);
      const [back] = await broker.drain(config.workQueue, 1);
      expect([back?.properties.messageId, back?.properties.headers?.['x-retry-no']]).toEqual(['held-e', 2]);
    });

    it('defers the batch while the store is down (the rest untried after 3 failures, and the claim already under way), and fails nothing', async () => {
      // Prepare
      const broker = testBroker();
      const config = testConfig({ CONCURRENCY: '1' });
      await setUpTopology(broker, config);
      const recorder = recordingHandler();
      const ids = ['e1', 'e2', 'e3', 'e4', 'e5'];
      const event = eventFor({ [config.workQueue]: ids.map((id) => rmqMessage(id, { messageId: id })) });
      // Act
      const summary = await invoke(config, event, recorder.handler, guard({ store: await kind.refusing() }));
      const back = await broker.drain(config.workQueue, ids.length);
      // Assess
      expect(summary).toMatchObject({ received: 5, deferred: 5, parked: 0, acked: 0 });
      expect(recorder.calls).toEqual([]);
      expect(back.map((m) => m.properties.messageId).sort()).toEqual(ids);
      // Three failures in a row stop the invocation; at CONCURRENCY 1 it keeps two attempts in hand
      // (core/handler-slots.ts), so the fourth message's claim may be under way then, and fail too.
      const failures = log.entries().filter((e) => e.message === 'idempotency: the store failed; message deferred' && ids.includes(String(e.messageId)));
      expect(failures.length).toBeGreaterThanOrEqual(3);
      expect(failures.length).toBeLessThanOrEqual(4);
    });
  });
});
