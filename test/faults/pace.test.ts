import { afterEach, describe, expect, it } from 'vitest';
import { AMQP_URL } from '../helpers/broker.js';
import { FaultScenario } from '../helpers/fault-scenario.js';
import { reportFault } from '../helpers/fault-report.js';
import { type InvokeResult, spawnInvoke } from '../helpers/invoke-child.js';
import { describeAccount } from '../helpers/message-account.js';
import { mostInWindow } from '../helpers/pace-windows.js';
import { type RecordingPartner, startRecordingPartner } from '../helpers/recording-partner.js';

/**
 * Pace (issue 24): a partner that allows 20 requests a second, and a queue with
 * `rateLimit: { perSecond: 20 }` served by two pull invocations at once, each its own process as in
 * the cloud (RATE_LIMIT_SHARES=2, what the construct sets for a pull function reserved at 2). No store:
 * each invocation takes its share, 10 a second, so no second should hold more than 20 + 2 requests
 * (each line of starts lets at most its share + 1 go in any second). The partner records each
 * request's arrival, and when its handler started (the start is what an invocation's share bounds;
 * a loaded machine can delay a request's send after it, bunching arrivals); the invocations are invoked in pairs, as two overlapping schedules would, until
 * the queue is drained, and every message must be handled once, none lost or parked. A handler whose
 * turn came just before its invocation's stop is aborted by the budget's signal, maybe after its
 * request reached the partner: that attempt counts (it is retried), so the partner may see one request
 * more per such cut-off, and never more than the summaries' `retried` (the partner fails nothing else).
 * Knobs: FAULT_PACE_MESSAGES (default 400; 2000 until 2026-11-29).
 *
 * The size: 400 messages at 20 a second is a 20 s drain, 20 one-second windows end to end and every
 * window sliding over them checked, the budget ends and the pairs' changeovers (where a second could
 * bunch starts) among them. The budget shrinks with the count (15 s for 400, 63 s for 2000): the
 * first pair's budget ends with about 40 % of the messages left, deferred or given back at its stop,
 * and a second pair finishes them, the shape of the 2000-message run with its 60 s budgets.
 */
const MESSAGES = Number(process.env.FAULT_PACE_MESSAGES ?? '400');
const PER_SECOND = 20;
const AT_ONCE = 2;
/** What a drain at exactly the limit takes: 20 s for 400. */
const IDEAL_MS = (MESSAGES / PER_SECOND) * 1000;
/** The default SAFETY_MARGIN_MS (3 s, the stop before the budget's end) and 60 % of the ideal drain. */
const BUDGET_MS = 3000 + 0.6 * IDEAL_MS;
const HANDLER = 'test/faults/handlers/partner-caller.ts';
/** Three times the ideal drain, plus 30 s for the pairs' start-ups (330 s for 2000). A limit, not a target. */
const DRAIN_LIMIT_MS = 3 * IDEAL_MS + 30_000;

describe('pace: two pull invocations at once on a queue limited to 20 requests a second', () => {
  let scenario: FaultScenario | undefined;
  let partner: RecordingPartner | undefined;

  afterEach(async () => {
    await partner?.close();
    await scenario?.cleanup();
    partner = undefined;
    scenario = undefined;
  });

  it(
    `no second holds more than ${PER_SECOND} + ${AT_ONCE} requests, and all ${MESSAGES} messages are handled once`,
    async () => {
      // Prepare
      scenario = await FaultScenario.prepare({
        url: AMQP_URL,
        label: 'pace',
        messages: MESSAGES,
        env: { RATE_LIMIT_PER_SECOND: String(PER_SECOND), RATE_LIMIT_SHARES: String(AT_ONCE) },
      });
      const s = scenario;
      partner = await startRecordingPartner();
      const p = partner;
      const env = { ...s.env, FAULT_RECORD_FILE: s.recordFile, PARTNER_URL: p.url, LOG_LEVEL: 'warn' };

      // Act: pairs of invocations until every message reached the partner and nothing is left on its way.
      const startedAt = performance.now();
      const results: InvokeResult[] = [];
      while (performance.now() - startedAt < DRAIN_LIMIT_MS) {
        const pair = Array.from({ length: AT_ONCE }, () => spawnInvoke({ handler: HANDLER, queue: s.config.workQueue, budgetMs: BUDGET_MS, env }));
        results.push(...(await Promise.all(pair.map((invocation) => invocation.exited))));
        if (new Set(p.ids).size >= MESSAGES && (await s.inFlight()) === 0) break;
      }
      const drainedMs = (p.arrivals.at(-1) ?? startedAt) - startedAt;
      const account = await s.account();

      // Assess
      const maxPerSecond = mostInWindow(p.arrivals, 1000);
      const senders = [...new Set(p.senders)];
      const maxPerSecondPerInvocation = Math.max(
        ...senders.map((sender) =>
          mostInWindow(
            p.arrivals.filter((_at, i) => p.senders[i] === sender),
            1000,
          ),
        ),
      );
      const maxStartsPerSecondPerInvocation = Math.max(
        ...senders.map((sender) =>
          mostInWindow(
            p.starts.filter((_at, i) => p.senders[i] === sender),
            1000,
          ),
        ),
      );
      const summaries = results.map((r) => r.summary ?? {});
      const pacedMs = summaries.reduce((sum, summary) => sum + Number(summary.pacedMs ?? 0), 0);
      const cutOffByBudget = summaries.reduce((sum, summary) => sum + Number(summary.retried ?? 0), 0);
      reportFault('pace-20-per-second-2-invocations', {
        sent: account.sent,
        handled: account.handled,
        parked: account.parked,
        stillQueued: account.stillQueued,
        missing: account.missing.length,
        duplicates: account.duplicates,
        repeatedEffects: account.repeatedEffects,
        requests: p.arrivals.length,
        perSecond: PER_SECOND,
        invocationsAtOnce: AT_ONCE,
        invocations: results.length,
        maxPerSecond,
        maxPerSecondPerInvocation,
        maxStartsPerSecondPerInvocation,
        drainSeconds: Number((drainedMs / 1000).toFixed(1)),
        idealSeconds: MESSAGES / PER_SECOND,
        pacedSeconds: Number((pacedMs / 1000).toFixed(1)),
        cutOffByBudget,
        deferred: summaries.reduce((sum, summary) => sum + Number(summary.deferred ?? 0), 0),
        requeued: summaries.reduce((sum, summary) => sum + Number(summary.requeued ?? 0), 0),
      });
      console.log(
        `[fault] pace: ${describeAccount(account)}; ${p.arrivals.length} requests, at most ${maxPerSecond} in a second (${maxPerSecondPerInvocation} from one invocation, which started at most ${maxStartsPerSecondPerInvocation} in a second), drained in ${(drainedMs / 1000).toFixed(1)} s against ${MESSAGES / PER_SECOND} s`,
      );
      expect(results.map((r) => r.code)).toEqual(results.map(() => 0));
      expect(maxPerSecond).toBeLessThanOrEqual(PER_SECOND + AT_ONCE);
      expect(maxStartsPerSecondPerInvocation).toBeLessThanOrEqual(PER_SECOND / AT_ONCE + 1);
      expect(account.missing).toEqual([]);
      expect(account.strangers).toEqual([]);
      expect({
        handled: account.handled,
        parked: account.parked,
        stillQueued: account.stillQueued,
        duplicates: account.duplicates,
        repeatedEffects: account.repeatedEffects,
      }).toEqual({ handled: MESSAGES, parked: 0, stillQueued: 0, duplicates: 0, repeatedEffects: 0 });
      expect(p.arrivals.length).toBeGreaterThanOrEqual(MESSAGES);
      expect(p.arrivals.length - MESSAGES).toBeLessThanOrEqual(cutOffByBudget);
    },
    DRAIN_LIMIT_MS + 120_000,
  );
});
