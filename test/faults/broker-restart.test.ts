import { statSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '../helpers/broker.js';
import { FaultScenario } from '../helpers/fault-scenario.js';
import { reportFault } from '../helpers/fault-report.js';
import { spawnInvoke } from '../helpers/invoke-child.js';
import { FAULT_IDEMPOTENCY_ENV } from '../helpers/idempotency-stores.js';
import { describeAccount } from '../helpers/message-account.js';
import { PrivateRabbit } from '../helpers/private-rabbit.js';
import { seedFromEnv } from '../helpers/seeded-random.js';

/**
 * Restart RabbitMQ in the middle of an invocation. The broker is a private node of the same flavour
 * as the broker under test (boomerang-f1 on 5681, or boomerang-r4-f1 on 5781 when AMQP_URL names a
 * 4.x node; never rabbit@localhost), stopped and started as a whole Erlang VM. The invocation runs as
 * its own process, as `npm run invoke` does: it must end with a clear error, an invocation while the
 * broker is down must fail fast with a clear error, and the next one after the restart carries on.
 */
const SEED = seedFromEnv('FAULT_SEED');
const HANDLER = 'test/faults/handlers/flaky-recorder.ts';

describe('RabbitMQ restarted in the middle of an invocation', () => {
  const node = PrivateRabbit.likeBrokerUnderTest('f1', 5681);
  let scenario: FaultScenario | undefined;

  beforeAll(async () => {
    await node.start();
  });

  afterEach(async () => {
    await scenario?.cleanup().catch(() => undefined);
    scenario = undefined;
  });

  afterAll(async () => {
    await node.stop();
    await node.wipe();
  });

  it.each([
    { idempotency: false, title: '' },
    { idempotency: true, title: ' (idempotency on, Redis)' },
  ])('ends the invocation with a clear error, loses nothing, and the next invocation carries on$title', async ({ idempotency }) => {
    // Prepare
    console.log(`[fault] broker-restart on ${node.name}@localhost, seed ${SEED} (rerun with FAULT_SEED=${SEED})`);
    scenario = await FaultScenario.prepare({
      url: node.url,
      label: 'restart',
      messages: 3000,
      env: {
        MAX_RETRIES: '4',
        BACKOFF_INITIAL_MS: '50',
        BACKOFF_MULTIPLIER: '2',
        BACKOFF_MAX_MS: '400',
        BACKOFF_JITTER: '0',
        IDLE_TIMEOUT_MS: '2000',
        CONNECT_TIMEOUT_MS: '2000',
        ...(idempotency ? FAULT_IDEMPOTENCY_ENV : {}),
      },
    });
    const s = scenario;
    const childEnv = { ...s.env, FAULT_RECORD_FILE: s.recordFile, FAULT_FAIL_PERCENT: '70', FAULT_SEED: String(SEED), FAULT_WORK_MS: '3', LOG_LEVEL: 'warn' };
    const invoke = () => spawnInvoke({ handler: HANDLER, queue: s.config.workQueue, budgetMs: 120_000, env: childEnv });

    // Act: stop the broker under a running invocation, try one while it is down, start it again.
    const during = invoke();
    while (fileSize(s.recordFile) === 0) await sleep(10);
    await sleep(1000);
    const stoppedAt = Date.now();
    await node.stop();
    const duringResult = await during.exited;
    const noticedAfterMs = Date.now() - stoppedAt;
    const whileDown = await invoke().exited;
    const restartStartedAt = Date.now();
    await node.start();
    const downForMs = Date.now() - stoppedAt;
    const restartMs = Date.now() - restartStartedAt;
    const after = await invoke().exited;
    // The drain's invocations need not wait the children's 2 s on an empty queue: its quiet 1.5 s outlasts the 400 ms delays.
    await s.drainUntilQuiet({ timeoutMs: 120_000, idleTimeoutMs: 500 });
    const account = await s.account();

    // Assess
    reportFault(idempotency ? 'broker-restart-idempotent' : 'broker-restart', {
      idempotency: idempotency ? 'redis' : 'off',
      seed: SEED,
      downForMs,
      restartMs,
      noticedAfterMs,
      sent: account.sent,
      handled: account.handled,
      parked: account.parked,
      missing: account.missing.length,
      duplicates: account.duplicates,
      repeatedEffects: account.repeatedEffects,
      handledAndParked: account.handledAndParkedIds.length,
      interruptedSummary: duringResult.summary,
      interruptedError: lastLine(duringResult.stderr),
      whileDownError: lastLine(whileDown.stderr),
      nextSummary: after.summary,
    });
    console.log(`[fault] broker-restart: ${describeAccount(account)}`);
    expect(duringResult.code).toBe(1);
    expect(duringResult.stderr).toMatch(/PullAbortedError: Invocation ended early: .*the next invocation carries on/);
    expect(duringResult.summary?.received).toBeGreaterThan(0);
    expect(whileDown.code).toBe(1);
    expect(whileDown.stderr).toMatch(new RegExp(`Cannot connect to amqp://guest:\\*\\*\\*@127\\.0\\.0\\.1:${node.port}.*is RabbitMQ running`));
    expect(after.code).toBe(0);
    expect(after.summary?.received).toBeGreaterThan(0);
    expect(account.missing).toEqual([]);
    expect(account.strangers).toEqual([]);
    expect(account.stillQueued).toBe(0);
    // The interrupted invocation waits for its running handlers, so their keys end completed or released:
    // at most the handlers running at once could repeat an effect.
    if (idempotency) expect(account.repeatedEffects).toBeLessThanOrEqual(s.config.concurrency);
  });
});

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function lastLine(text: string): string | undefined {
  return text
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('{'))
    .pop();
}
