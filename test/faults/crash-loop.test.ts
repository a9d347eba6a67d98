import { afterEach, describe, expect, it } from 'vitest';
import { NativeAnnotation } from '../../shared/native/native-annotations.js';
import { nativeDeliveryLimit } from '../../shared/topology/native-queue.js';
import { AMQP_URL, nativeSupport } from '../helpers/broker.js';
import { FaultScenario } from '../helpers/fault-scenario.js';
import { reportFault } from '../helpers/fault-report.js';
import { spawnInvoke } from '../helpers/invoke-child.js';
import { describeAccount } from '../helpers/message-account.js';

/**
 * A handler that crashes its process (SIGKILL) for one message, ahead of good ones, on a quorum work
 * queue with no dead-letter target. Without the crash-loop guard the message loops forever on 3.10 and
 * is dropped by 4.x past the delivery limit (gone after 21 invocations on 4.3.6). With it, invocation
 * CRASH_LOOP_LIMIT + 1 parks it untried and handles the good ones (returned with it by every crash,
 * so at the limit too), and nothing is lost. On a native queue (RabbitMQ 4.3+, skipped before) the
 * guard counts only the crashes among its returns, and parks it (dead-lettered, `rejected`) long
 * before the queue's own `x-delivery-limit` would.
 */
const MAX_INVOCATIONS = 25;
const GOOD = 20;
const POISON = 'poison';
const HANDLER = 'test/faults/handlers/crash-on-poison.ts';
const { version: VERSION, native: NATIVE } = await nativeSupport('the native crash-loop case');

describe('a handler that SIGKILLs its process for one message', () => {
  let scenario: FaultScenario | undefined;

  afterEach(async () => {
    await scenario?.cleanup();
    scenario = undefined;
  });

  /** Invokes, as a scheduler would, until an invocation ends without being killed; then drains and accounts. */
  async function crashLoop(label: string, env: Record<string, string>) {
    // Prepare: the poison first, then the good ones, all in one prefetch window.
    scenario = await FaultScenario.prepare({ url: AMQP_URL, label, messages: 0, env });
    const s = scenario;
    await s.publishRaw([
      { key: POISON, content: Buffer.from('{"poison":true}'), options: { persistent: true, messageId: POISON, contentType: 'application/json' } },
    ]);
    await s.publish(GOOD);
    const childEnv = { ...s.env, FAULT_RECORD_FILE: s.recordFile, FAULT_FAIL_PERCENT: '0', FAULT_POISON_ID: POISON, LOG_LEVEL: 'error' };

    // Act
    let invocations = 0;
    let kills = 0;
    for (; invocations < MAX_INVOCATIONS; ) {
      const result = await spawnInvoke({ handler: HANDLER, queue: s.config.workQueue, budgetMs: 20_000, env: childEnv }).exited;
      invocations++;
      if (result.signal !== 'SIGKILL') break;
      kills++;
    }
    await s.drainUntilQuiet();
    const account = await s.account();
    const goodParked = [...account.parkReasons.keys()].filter((id) => id !== POISON);
    console.log(`[fault] crash loop (${label}): ${invocations} invocations, ${kills} kills; ${describeAccount(account)}`);
    return {
      invocations,
      kills,
      account,
      goodParked,
      config: s.config,
      figures: {
        invocations,
        kills,
        sent: account.sent,
        handled: account.handled,
        parked: account.parked,
        goodParked: goodParked.length,
        poisonReason: account.parkReasons.get(POISON),
        missing: account.missing.length,
      },
    };
  }

  /** What every crash-loop case shows: the poison parked untried, the good ones handled, nothing lost. */
  function expectParkedAlone({ invocations, account, goodParked }: Awaited<ReturnType<typeof crashLoop>>): void {
    expect(invocations).toBeLessThanOrEqual(MAX_INVOCATIONS);
    expect(account.parkReasons.get(POISON)).toMatch(/^crash loop: delivered \d+ times$/);
    // A crash returns the whole prefetch window: the good messages reach the limit too, yet are handled.
    expect(goodParked).toEqual([]);
    expect(account.handled).toBe(GOOD);
    expect(account.missing).toEqual([]);
    expect(account.stillQueued).toBe(0);
    expect(account.strangers).toEqual([]);
  }

  it(`parks it as a crash loop within ${MAX_INVOCATIONS} invocations, and loses nothing`, async () => {
    const run = await crashLoop('crash-loop', {});
    reportFault(`crash-loop-${new URL(AMQP_URL).port}`, { amqpUrlPort: new URL(AMQP_URL).port, ...run.figures });
    expectParkedAlone(run);
    expect(run.account.parkedHeaders.get(POISON)?.['boomerang-error-name']).toBe('CrashLoopError');
  });

  it.skipIf(!NATIVE)(`on a native queue (RabbitMQ ${VERSION}): parks it as a crash loop before the broker's delivery limit, and loses nothing`, async () => {
    // Short delays: a native queue paces what a crash returns (min x x-delivery-count, capped at max).
    const run = await crashLoop('crash-loop-native', { DELAY_MODE: 'native', BACKOFF_INITIAL_MS: '50', BACKOFF_MAX_MS: '400' });
    const headers = run.account.parkedHeaders.get(POISON);
    reportFault('crash-loop-native', {
      ...run.figures,
      poisonDeliveryCount: headers?.['x-delivery-count'],
      deadLetterReason: headers?.['x-last-death-reason'],
    });
    expectParkedAlone(run);
    // Parked by the guard (dead-lettered as rejected), not by the broker's delivery limit.
    expect(headers?.[NativeAnnotation.errorName]).toBe('CrashLoopError');
    expect(headers?.['x-last-death-reason']).toBe('rejected');
    expect(headers?.['x-delivery-count']).toBeLessThan(
      nativeDeliveryLimit({ maxRetries: run.config.policy.maxRetries, crashLoopLimit: run.config.crashLoopLimit }),
    );
  });
});
