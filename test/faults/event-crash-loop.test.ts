import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LAST_DELIVERY_COUNT } from '../../shared/message/headers.js';
import { AMQP_URL } from '../helpers/broker.js';
import { runEventSource, type MappingOnFailure } from '../helpers/event-source-emulator.js';
import { FaultScenario } from '../helpers/fault-scenario.js';
import { reportFault } from '../helpers/fault-report.js';
import { FAULT_IDEMPOTENCY_ENV } from '../helpers/idempotency-stores.js';
import { spawnInvoke } from '../helpers/invoke-child.js';
import { describeAccount, readRecords } from '../helpers/message-account.js';

/**
 * Event mode: a handler that SIGKILLs its process for one message, first in a batch with good ones,
 * on a work queue consumed by an emulated event source mapping (test/helpers/event-source-emulator.ts)
 * that invokes the event function in a child process with the `aws:rmq` event of real deliveries.
 * No source says what the mapping does after a failed invocation, so each plausible way is run:
 * nack or reject with requeue, closing its channel, or holding the batch and invoking again.
 *
 * On a quorum work queue the three that give the batch back are counted by the broker (4.3 counts a
 * requeueing nack in `x-acquired-count` only, which event mode's crash-loop guard reads too), and
 * invocation CRASH_LOOP_LIMIT + 1 parks the poison untried and handles the good ones. Holding the
 * batch gives the broker nothing to count, and neither does a classic queue: those are measured, not
 * parked (docs/pull-and-event.md says what to turn on), and the emulator stops after UNCOUNTED_STOP.
 * One case puts a good message ahead of the poison: nothing is acked before the batch, so it comes
 * back with the poison at the same count and is taken for the culprit; measured, bounded at 21.
 */
const GOOD = 3;
const BATCH = GOOD + 1;
/**
 * The scenarios' CRASH_LOOP_LIMIT: the poison is parked by the invocation after this many crashes.
 * 3, not the default 10 (until 2026-11-29 these ran at the default): each invocation is a child
 * process (about 1 s), and the limit only sets how many there are. What is proven is which broker
 * count moves under each mapping behaviour and that the guard parks at the limit + 1, or that nothing
 * counts; a count moves by one per crash whatever the limit. The default itself is run by
 * crash-loop.test.ts (pull mode, parked at invocation 11). The good-ahead case runs to
 * LAST_DELIVERY_COUNT (the broker's) whatever the limit.
 */
const LIMIT = 3;
const COUNTED_MAX = LIMIT + 4;
/** Where an uncounted loop is stopped: past the invocation that parks a counted one. */
const UNCOUNTED_STOP = LIMIT + 2;
const POISON = 'poison';
const HANDLER = 'test/faults/handlers/crash-on-poison.ts';
const PORT = new URL(AMQP_URL).port;

describe('event mode: a handler that SIGKILLs its process for one message, whatever the mapping does after a failed invocation', () => {
  let scenario: FaultScenario | undefined;

  afterEach(async () => {
    await scenario?.cleanup();
    scenario = undefined;
  });

  /**
   * Runs the emulated mapping until it idles (or `maxInvocations`), then drains with a healthy handler
   * and accounts. `goodAhead` good messages go ahead of the poison in the batch; `budgetMs` is each invocation's.
   */
  async function mappingRun(
    label: string,
    onFailure: MappingOnFailure,
    maxInvocations: number,
    options: { env?: Record<string, string>; budgetMs?: number; goodAhead?: number } = {},
  ) {
    const { env = {}, budgetMs = 10_000, goodAhead = 0 } = options;
    // Prepare: the poison (first unless good ones go ahead of it), then the good ones: one batch.
    scenario = await FaultScenario.prepare({
      url: AMQP_URL,
      label,
      messages: 0,
      env: { BACKOFF_INITIAL_MS: '300', BACKOFF_MAX_MS: '1200', CRASH_LOOP_LIMIT: String(LIMIT), ...env },
    });
    const s = scenario;
    await s.publish(goodAhead);
    await s.publishRaw([
      { key: POISON, content: Buffer.from('{"poison":true}'), options: { persistent: true, messageId: POISON, contentType: 'application/json' } },
    ]);
    await s.publish(GOOD - goodAhead);
    const childEnv = { ...s.env, FAULT_RECORD_FILE: s.recordFile, FAULT_FAIL_PERCENT: '0', FAULT_POISON_ID: POISON, LOG_LEVEL: 'error' };
    const eventFile = join(dirname(s.recordFile), 'event.json');
    let kills = 0;
    // The broker's counts on the poison's last delivery: which of them moved.
    let poisonCounts: Record<string, unknown> = {};

    // Act
    const run = await runEventSource({
      url: AMQP_URL,
      queue: s.config.workQueue,
      batchSize: BATCH,
      onFailure,
      maxInvocations,
      invoke: async (event) => {
        writeFileSync(eventFile, JSON.stringify(event));
        const headers = Object.values(event.rmqMessagesByQueue)
          .flat()
          .find((m) => m.basicProperties?.messageId === POISON)?.basicProperties?.headers;
        if (headers !== undefined)
          poisonCounts = { deliveryCount: headers?.['x-delivery-count'] ?? 'absent', acquiredCount: headers?.['x-acquired-count'] ?? 'absent' };
        const result = await spawnInvoke({ handler: HANDLER, queue: s.config.workQueue, budgetMs, env: childEnv, eventFile }).exited;
        if (result.signal === 'SIGKILL') kills++;
        return result.code === 0;
      },
    });
    const goodByMapping = new Set(
      readRecords(s.recordFile)
        .handled.map(([id]) => id)
        .filter((id) => id !== POISON),
    ).size;
    await s.drainUntilQuiet();
    const account = await s.account();
    const goodParked = [...account.parkReasons.keys()].filter((id) => id !== POISON);
    console.log(
      `[fault] event crash loop (${label}): ${run.invocations} invocations, ${kills} kills, stopped: ${run.stoppedBecause}; ${describeAccount(account)}`,
    );
    const figures = {
      amqpUrlPort: PORT,
      onFailure,
      queueType: s.config.queueType,
      crashLoopLimit: LIMIT,
      idempotency: env.IDEMPOTENCY_STORE === undefined ? 'off' : 'redis',
      invocations: run.invocations,
      kills,
      stoppedBecause: run.stoppedBecause,
      goodHandledByMapping: goodByMapping,
      goodAhead,
      sent: account.sent,
      handled: account.handled,
      parked: account.parked,
      goodParked: goodParked.length,
      poisonReason: account.parkReasons.get(POISON) ?? 'not parked',
      poisonLastDeliveryCount: poisonCounts.deliveryCount,
      poisonLastAcquiredCount: poisonCounts.acquiredCount,
      missing: account.missing.length,
    };
    return { run, kills, account, goodParked, goodByMapping, figures };
  }

  it.each<MappingOnFailure>(['nack', 'reject', 'close-channel'])(
    'quorum work queue, the mapping gives the batch back (%s): parked as a crash loop by invocation CRASH_LOOP_LIMIT + 1, the good ones handled, nothing lost',
    async (onFailure) => {
      const r = await mappingRun(`event-crash-${onFailure}`, onFailure, COUNTED_MAX);
      reportFault(`event-crash-loop-${onFailure}-${PORT}`, r.figures);
      // Assess
      expect(r.run.stoppedBecause).toBe('idle');
      expect(r.kills).toBe(LIMIT);
      expect(r.run.invocations).toBe(LIMIT + 1);
      expect(r.account.parkReasons.get(POISON)).toMatch(/^crash loop: delivered \d+ times$/);
      expect(r.account.parkedHeaders.get(POISON)?.['boomerang-error-name']).toBe('CrashLoopError');
      expect(r.goodParked).toEqual([]);
      expect(r.goodByMapping).toBe(GOOD);
      expect(r.account.handled).toBe(GOOD);
      expect(r.account.missing).toEqual([]);
      expect(r.account.stillQueued).toBe(0);
      expect(r.account.strangers).toEqual([]);
    },
  );

  it('quorum work queue, the mapping nacks, a good message ahead of the poison: the good one at the limit is taken for the culprit; the batch is parked whole at the last count', async () => {
    const r = await mappingRun('event-crash-nack-behind', 'nack', LAST_DELIVERY_COUNT + 4, { goodAhead: 1 });
    reportFault(`event-crash-loop-nack-good-ahead-${PORT}`, {
      ...r.figures,
      goodParkedAsCrashLoop: r.goodParked.filter((id) => r.account.parkReasons.get(id)?.startsWith('crash loop')).length,
    });
    // Assess: bounded and nothing lost, but the wrong message parked at the limit (the one ahead,
    // handled by each crashed invocation: nothing is acked before the batch), so the poison crashed on
    // until the last count, where the whole batch is parked (4.x would dead-letter it at the next return).
    expect(r.run.stoppedBecause).toBe('idle');
    expect(r.run.invocations).toBe(LAST_DELIVERY_COUNT + 1);
    expect(r.account.parkReasons.get(POISON)).toBe(`crash loop: delivered ${LAST_DELIVERY_COUNT + 1} times`);
    expect(r.goodParked).toHaveLength(GOOD);
    expect(r.account.handled).toBe(1);
    expect(r.account.missing).toEqual([]);
    expect(r.account.stillQueued).toBe(0);
  });

  it(`quorum work queue, the mapping holds the batch and invokes again: no broker count moves, it crashes every invocation until the mapping is stopped (${UNCOUNTED_STOP})`, async () => {
    const r = await mappingRun('event-crash-hold', 'hold', UNCOUNTED_STOP);
    reportFault(`event-crash-loop-hold-${PORT}`, r.figures);
    // Assess: the statelessly uncatchable case, measured: every invocation killed, the batch stalled.
    expect(r.run.stoppedBecause).toBe('max-invocations');
    expect(r.kills).toBe(UNCOUNTED_STOP);
    expect(r.goodByMapping).toBe(0);
    expect(r.account.parkReasons.has(POISON)).toBe(false);
    // The drain's healthy handler takes what the stopped mapping gave back: nothing lost.
    expect(r.account.handled).toBe(GOOD + 1);
    expect(r.account.missing).toEqual([]);
  });

  it('quorum work queue, the mapping holds the batch, idempotency on (Redis): the poison found in progress is deferred and the batch goes through; it crashes again once its key expires', async () => {
    const r = await mappingRun('event-crash-hold-idem', 'hold', UNCOUNTED_STOP, { env: { ...FAULT_IDEMPOTENCY_ENV }, budgetMs: 3000 });
    reportFault(`event-crash-loop-hold-idempotent-${PORT}`, { ...r.figures, batchesAcked: r.run.batchesAcked });
    // Assess: the batch goes through at the second invocation (a good message whose key the crashed run
    // had claimed is deferred with the poison, and handled once the key expires); the poison is not parked.
    expect(r.run.batchesAcked).toBeGreaterThanOrEqual(1);
    expect(r.kills).toBeGreaterThanOrEqual(1);
    expect(r.kills).toBeLessThan(r.run.invocations);
    expect(r.account.parkReasons.has(POISON)).toBe(false);
    expect(r.account.handled).toBe(GOOD + 1);
    expect(r.account.missing).toEqual([]);
  });

  it(`classic work queue, the mapping nacks: no count at all, it crashes every invocation until the mapping is stopped (${UNCOUNTED_STOP})`, async () => {
    const r = await mappingRun('event-crash-classic', 'nack', UNCOUNTED_STOP, { env: { QUEUE_TYPE: 'classic' } });
    reportFault(`event-crash-loop-classic-nack-${PORT}`, r.figures);
    // Assess
    expect(r.run.stoppedBecause).toBe('max-invocations');
    expect(r.kills).toBe(UNCOUNTED_STOP);
    expect(r.account.parkReasons.has(POISON)).toBe(false);
    expect(r.account.handled).toBe(GOOD + 1);
    expect(r.account.missing).toEqual([]);
  });
});
