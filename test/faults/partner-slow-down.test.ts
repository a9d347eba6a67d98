import { appendFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebhookDelivery } from '../../shared/examples/webhooks/webhook-delivery.js';
import type { Handler } from '../../shared/message/message.js';
import { runNativePull } from '../../shared/native/native-pull.js';
import { silentLogger } from '../helpers/fakes.js';
import type { Summary } from '../../shared/observability/summary.js';
import { runPull } from '../../shared/pull/pull.js';
import { AMQP_URL, sleep } from '../helpers/broker.js';
import { NATIVE_BROKER } from '../helpers/broker-version.js';
import { reportFault } from '../helpers/fault-report.js';
import { FaultScenario } from '../helpers/fault-scenario.js';
import { type SlowDownPartner, startSlowDownPartner } from '../helpers/slow-down-partner.js';

/**
 * Issue 24, point 3: a partner answers 429 with `Retry-After: 5` for its first 10 s, then 200. The
 * webhook example's handler and settings (tiers, 8 retries from 1 s, CONCURRENCY 8, BATCH_SIZE 100,
 * the default breaker) serve 40 messages, with a pull invocation started every second whether the
 * last one ended or not, as a schedule would. The partner must get at most CONCURRENCY requests within
 * its 10 s, and every message must be handled once it recovers: none lost, none parked.
 * `-no-pause` runs the same with a rule that turns the pause off (`pauseQueue: false`), for comparison.
 */
const MESSAGES = 40;
const CONCURRENCY = 8;
const LIMITED_FOR_MS = 10_000;
const RETRY_AFTER_SECONDS = 5;
const SCHEDULE_MS = 1000;
const WEBHOOK_ENV = {
  DELAY_MODE: 'tiers',
  MAX_RETRIES: '8',
  BACKOFF_INITIAL_MS: '1000',
  BACKOFF_MULTIPLIER: '2',
  BACKOFF_MAX_MS: '3600000',
  BACKOFF_JITTER: '0.1',
  CONCURRENCY: String(CONCURRENCY),
  BATCH_SIZE: '100',
  BREAKER_THRESHOLD: '10',
  IDLE_TIMEOUT_MS: '300',
};
const NO_PAUSE_RULE = JSON.stringify([{ match: { errorName: 'RetryableError' }, pauseQueue: false }]);

/** The webhook example's handler, recording each attempt in the scenario's record file (S handled, F failed). */
function recordedWebhook(recordFile: string): Handler {
  const webhook = createWebhookDelivery({ httpTimeoutMs: 2000 });
  return async (message, context) => {
    const line = `${String(message.properties.messageId)} ${message.retryNo} - ${process.pid} ${Date.now()} -`;
    try {
      await webhook(message, context);
    } catch (error) {
      appendFileSync(recordFile, `F ${line}\n`);
      throw error;
    }
    appendFileSync(recordFile, `S ${line}\n`);
  };
}

describe.each([
  ['partner-slow-down', 'tiers, as the example', {}, true, true],
  ['partner-slow-down-native', 'native (RabbitMQ 4.3+)', { DELAY_MODE: 'native' }, NATIVE_BROKER, true],
  ['partner-slow-down-no-pause', 'tiers, the pause turned off by a rule (for comparison)', { RETRY_RULES: NO_PAUSE_RULE }, true, false],
])('a partner that says "slow down": %s (%s)', (name, _what, env, runs, paused) => {
  let scenario: FaultScenario | undefined;
  let partner: SlowDownPartner | undefined;

  afterEach(async () => {
    await partner?.close();
    await scenario?.cleanup();
    scenario = undefined;
    partner = undefined;
  });

  const title = paused
    ? 'hears at most CONCURRENCY requests within its 10 s, and every message is handled once it recovers'
    : 'handles every message once it recovers; the partner hears what the breaker lets through';
  it.runIf(runs)(title, async () => {
    // Prepare
    partner = await startSlowDownPartner({ limitedForMs: LIMITED_FOR_MS, retryAfterSeconds: RETRY_AFTER_SECONDS });
    scenario = await FaultScenario.prepare({ url: AMQP_URL, label: 'slow-down', messages: 0, env: { ...WEBHOOK_ENV, ...env } });
    const s = scenario;
    const p = partner;
    await s.publishRaw(
      Array.from({ length: MESSAGES }, (_, i) => {
        const id = `${s.config.workQueue}-${i}`;
        return {
          key: id,
          content: Buffer.from(JSON.stringify({ url: `${p.url}/hooks/${i}`, headers: { 'x-id': id } })),
          options: { persistent: true, messageId: id, contentType: 'application/json' },
        };
      }),
    );
    const handler = recordedWebhook(s.recordFile);
    const run = s.config.delayMode === 'native' ? runNativePull : runPull;
    const handled = (): number => new Set(p.requests.filter((r) => r.status === 200).map((r) => r.id)).size;

    // Act: an invocation every second, as a schedule starts them, until every message was handled
    const invocations: Promise<Summary | Error>[] = [];
    const deadline = Date.now() + 90_000;
    while (handled() < MESSAGES && Date.now() < deadline) {
      invocations.push(run({ config: s.config, handler, budgetMs: 5000, log: silentLogger }).catch((error: Error) => error));
      await sleep(SCHEDULE_MS);
    }
    const allHandledAt = Math.max(...p.requests.filter((r) => r.status === 200).map((r) => r.at));
    const outcomes = await Promise.all(invocations);
    const summaries = outcomes.filter((o): o is Summary => !(o instanceof Error));
    const account = await s.account();

    // Assess
    const windowStart = p.windowStart() ?? Number.NaN;
    const inWindow = p.requests.filter((r) => r.at - windowStart < LIMITED_FOR_MS);
    const figures = {
      sent: MESSAGES,
      concurrency: CONCURRENCY,
      retryAfterSeconds: RETRY_AFTER_SECONDS,
      limitedForMs: LIMITED_FOR_MS,
      scheduleMs: SCHEDULE_MS,
      requestsInWindow: inWindow.length,
      answered429: p.requests.filter((r) => r.status === 429).length,
      requests: p.requests.length,
      invocations: invocations.length,
      invocationsFailed: outcomes.length - summaries.length,
      invocationsTakingNothingPaused: summaries.filter((x) => x.stoppedBecause === 'paused' && x.received === 0).length,
      deferred: summaries.reduce((sum, x) => sum + x.deferred, 0),
      handled: account.handled,
      parked: account.parked,
      missing: account.missing.length,
      duplicates: account.duplicates,
      repeatedEffects: account.repeatedEffects,
      windowEndToAllHandledMs: allHandledAt - (windowStart + LIMITED_FOR_MS),
      firstRequestToAllHandledMs: allHandledAt - windowStart,
    };
    reportFault(name, figures);
    expect(figures.invocationsFailed).toBe(0);
    expect(account.missing).toEqual([]);
    expect(account.parked).toBe(0);
    expect(account.handled).toBe(MESSAGES);
    expect(account.repeatedEffects).toBe(0);
    if (!paused) return;
    expect(figures.requestsInWindow).toBeLessThanOrEqual(CONCURRENCY);
    expect(figures.invocationsTakingNothingPaused).toBeGreaterThan(0);
  });
});
