import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../helpers/fakes.js';
import type { Handler } from '../../shared/message/message.js';
import { runPull } from '../../shared/pull/pull.js';
import { AMQP_URL } from '../helpers/broker.js';
import { FaultScenario, withConfirmChannel } from '../helpers/fault-scenario.js';
import { reportFault } from '../helpers/fault-report.js';

/**
 * An invocation must not keep the messages it has finished with: otherwise one invocation with
 * MAX_MESSAGES=10000 (the default) of 64 KiB webhooks holds 640 MiB, a Lambda runs out of memory, the
 * batch comes back, and it runs out again.
 *
 * Measured exactly, not by RSS: a weak reference to every 10th message body handled, and at the last
 * message (the invocation still running) a full GC, then the share of those bodies still alive. The
 * handler keeps nothing, so all but the few still in flight must be gone. (Before the fix in the
 * working tree of 2026-11-22, every one of them was alive: each wait raced the never-settling
 * "broken" promise, which kept every race's result, the delivery, until the invocation ended.)
 */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MESSAGES = 12_000;
const BODY_BYTES = 4096;

describe('memory of one invocation', () => {
  let scenario: FaultScenario | undefined;

  afterEach(async () => {
    await scenario?.cleanup();
    scenario = undefined;
  });

  it(`does not keep the messages it has handled (${MESSAGES} × ${BODY_BYTES / 1024} KiB)`, async () => {
    // Prepare
    scenario = await FaultScenario.prepare({ url: AMQP_URL, label: 'retention', messages: 0, env: { MAX_MESSAGES: String(MESSAGES) } });
    const s = scenario;
    await withConfirmChannel(AMQP_URL, async (channel) => {
      const body = Buffer.alloc(BODY_BYTES, 'x');
      for (let i = 0; i < MESSAGES; i++) channel.sendToQueue(s.config.workQueue, body, { persistent: true, messageId: `r-${i}` });
      await channel.waitForConfirms();
    });
    const watched: WeakRef<Buffer>[] = [];
    let handled = 0;
    let stillAlive = -1;
    const handler: Handler = (message) => {
      handled++;
      // Bodies of the last 1000 may legitimately still be in flight: watch the earlier ones only.
      if (handled % 10 === 0 && handled <= MESSAGES - 1000) watched.push(new WeakRef(message.body));
      if (handled === MESSAGES) {
        gc();
        stillAlive = watched.filter((ref) => ref.deref() !== undefined).length;
      }
    };

    // Act
    const summary = await runPull({ config: s.config, handler, budgetMs: 300_000, log: silentLogger });

    // Assess
    const share = stillAlive / watched.length;
    reportFault('memory-retention', {
      messages: MESSAGES,
      bodyBytes: BODY_BYTES,
      watchedBodies: watched.length,
      stillAliveAtLastMessage: stillAlive,
      retainedMiBEstimate: (share * (MESSAGES - 1000) * BODY_BYTES) / 2 ** 20,
    });
    expect(summary.acked).toBe(MESSAGES);
    expect(stillAlive).toBeGreaterThanOrEqual(0);
    expect(share).toBeLessThan(0.01);
  });
});
