import { afterEach, describe, expect, it } from 'vitest';
import { AMQP_URL } from '../helpers/broker.js';
import { FaultScenario } from '../helpers/fault-scenario.js';
import { reportFault } from '../helpers/fault-report.js';
import { spawnInvoke } from '../helpers/invoke-child.js';
import { describeAccount } from '../helpers/message-account.js';

/**
 * A handler that crashes its process (SIGKILL) for one message, ahead of good ones, on a quorum work
 * queue with no dead-letter target. Without the crash-loop guard the message loops forever on 3.10 and
 * is dropped by 4.x past the delivery limit (gone after 21 invocations on 4.3.6). With it, invocation
 * CRASH_LOOP_LIMIT + 1 parks it untried and handles the good ones (returned with it by every crash,
 * so at the limit too), and nothing is lost.
 */
const MAX_INVOCATIONS = 25;
const GOOD = 20;
const POISON = 'poison';
const HANDLER = 'test/faults/handlers/crash-on-poison.ts';

describe('a handler that SIGKILLs its process for one message', () => {
  let scenario: FaultScenario | undefined;

  afterEach(async () => {
    await scenario?.cleanup();
    scenario = undefined;
  });

  it(`parks it as a crash loop within ${MAX_INVOCATIONS} invocations, and loses nothing`, async () => {
    // Prepare: the poison first, then the good ones, all in one prefetch window.
    scenario = await FaultScenario.prepare({ url: AMQP_URL, label: 'crash-loop', messages: 0, env: {} });
    const s = scenario;
    await s.publishRaw([{ key: POISON, content: Buffer.from('{"poison":true}'), options: { persistent: true, messageId: POISON, contentType: 'application/json' } }]);
    await s.publish(GOOD);
    const childEnv = { ...s.env, FAULT_RECORD_FILE: s.recordFile, FAULT_FAIL_PERCENT: '0', FAULT_POISON_ID: POISON, LOG_LEVEL: 'error' };

    // Act: invoke, as a scheduler would, until an invocation ends without being killed.
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

    // Assess
    const goodParked = [...account.parkReasons.keys()].filter((id) => id !== POISON);
    reportFault(`crash-loop-${new URL(AMQP_URL).port}`, {
      amqpUrlPort: new URL(AMQP_URL).port, invocations, kills, sent: account.sent, handled: account.handled, parked: account.parked,
      goodParked: goodParked.length, poisonReason: account.parkReasons.get(POISON), missing: account.missing.length,
    });
    console.log(`[fault] crash loop: ${invocations} invocations, ${kills} kills; ${describeAccount(account)}`);
    expect(invocations).toBeLessThanOrEqual(MAX_INVOCATIONS);
    expect(account.parkReasons.get(POISON)).toMatch(/^crash loop: delivered \d+ times$/);
    expect(account.parkedHeaders.get(POISON)?.['boomerang-error-name']).toBe('CrashLoopError');
    // A crash returns the whole prefetch window: the good messages reach the limit too, yet are handled.
    expect(goodParked).toEqual([]);
    expect(account.handled).toBe(GOOD);
    expect(account.missing).toEqual([]);
    expect(account.stillQueued).toBe(0);
    expect(account.strangers).toEqual([]);
  });
});
