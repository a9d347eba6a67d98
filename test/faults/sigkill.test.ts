import { appendFileSync, statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { AMQP_URL, sleep } from '../helpers/broker.js';
import { FaultScenario } from '../helpers/fault-scenario.js';
import { reportFault } from '../helpers/fault-report.js';
import { spawnInvoke } from '../helpers/invoke-child.js';
import { FAULT_IDEMPOTENCY_ENV } from '../helpers/idempotency-stores.js';
import { describeAccount } from '../helpers/message-account.js';
import { seededRandom, seedFromEnv } from '../helpers/seeded-random.js';

/**
 * SIGKILL the function process at random moments while it retries, many times over, then let a
 * healthy invocation drain everything and account for every message sent.
 *
 * Most attempts fail (FAULT_FAIL_PERCENT, default 70) and delays are 20-160 ms, so most dispositions
 * are "publish a copy + ack" and a kill often lands between the two steps. With BATCH_SIZE=1 one
 * message at most is between its two steps at any moment, so the README's table predicts per kill:
 * publish-then-ack at most one duplicate and no loss, ack-then-publish at most one loss and no
 * duplicate. With the default batch (100), up to a batch of copies can be in flight per kill.
 *
 * Knobs: FAULT_SEED (printed), FAULT_KILLS (default 25 per case), FAULT_MESSAGES (default 600; topped
 * up by half that whenever fewer than three batches (at least 100) are left on their way, so every
 * kill finds work, up to FAULT_MESSAGES per kill in all), FAULT_KEEP_RECORDS (a folder: each case's record file is copied there, with a
 * `K <pid> <epochMs>` line for every kill).
 */
const SEED = seedFromEnv('FAULT_SEED');
const KILLS = Number(process.env.FAULT_KILLS ?? '25');
const MESSAGES = Number(process.env.FAULT_MESSAGES ?? '600');
/**
 * The top-ups stop here, a bound on the run's size. At batch 100 an idle machine gets through about
 * 300 messages per kill: a cap of 10 loads (6 000) ran out after 23 kills, and the children that
 * came after found nothing to do and exited before their kill.
 */
const MAX_SENT = MESSAGES * KILLS;
/** A kill lands uniformly within this long after the child's first handled attempt. */
const KILL_WINDOW_MS = 400;
const HANDLER = 'test/faults/handlers/flaky-recorder.ts';

/**
 * With idempotency on (Redis), a kill between the handler's effect and the write that marks its key
 * completed leaves the key in progress until the killed invocation's hard stop: the children get a
 * short budget, so the drain after the kills sees those keys free again.
 */
const IDEMPOTENT_BUDGET_MS = 8000;

const cases = [
  { name: 'publish-then-ack, batch 1', ackOrder: 'publish-then-ack', batchSize: 1, concurrency: 1, idempotency: false },
  { name: 'ack-then-publish, batch 1', ackOrder: 'ack-then-publish', batchSize: 1, concurrency: 1, idempotency: false },
  { name: 'publish-then-ack, default batch 100 and concurrency 8', ackOrder: 'publish-then-ack', batchSize: 100, concurrency: 8, idempotency: false },
  { name: 'publish-then-ack, batch 1, idempotency on (Redis)', ackOrder: 'publish-then-ack', batchSize: 1, concurrency: 1, idempotency: true },
  { name: 'publish-then-ack, default batch 100 and concurrency 8, idempotency on (Redis)', ackOrder: 'publish-then-ack', batchSize: 100, concurrency: 8, idempotency: true },
] as const;

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await sleep(5);
}

describe('SIGKILL of the function process while it retries', () => {
  let scenario: FaultScenario | undefined;

  afterEach(async () => {
    await scenario?.cleanup();
    scenario = undefined;
  });

  it.each(cases)('$name: accounts for every message', async ({ name, ackOrder, batchSize, concurrency, idempotency }) => {
    // Prepare
    console.log(`[fault] sigkill seed ${SEED} (rerun with FAULT_SEED=${SEED})`);
    const random = seededRandom(SEED);
    scenario = await FaultScenario.prepare({
      url: AMQP_URL,
      label: 'kill',
      messages: MESSAGES,
      env: {
        ACK_ORDER: ackOrder,
        BATCH_SIZE: String(batchSize),
        CONCURRENCY: String(concurrency),
        MAX_RETRIES: '4',
        BACKOFF_INITIAL_MS: '20',
        BACKOFF_MULTIPLIER: '2',
        BACKOFF_MAX_MS: '160',
        BACKOFF_JITTER: '0',
        // Long enough that a child does not stop between two short delays.
        IDLE_TIMEOUT_MS: '2000',
        SAFETY_MARGIN_MS: '1000',
        ...(idempotency ? FAULT_IDEMPOTENCY_ENV : {}),
      },
    });
    const s = scenario;
    const childEnv = { ...s.env, FAULT_RECORD_FILE: s.recordFile, FAULT_FAIL_PERCENT: '70', FAULT_SEED: String(SEED), LOG_LEVEL: 'error' };
    let kills = 0;
    let cleanExits = 0;
    const startedAt = Date.now();

    // Act: kill, again and again, while there is work.
    for (let round = 0; kills < KILLS && round < KILLS * 3; round++) {
      // Keep work on the queue so that every kill lands while messages are retrying: at least three
      // batches on their way, or an invocation can finish its work and exit before the kill.
      if ((await s.inFlight()) < Math.max(100, 3 * batchSize) && s.ids.length < MAX_SENT) await s.publish(MESSAGES / 2);
      const before = fileSize(s.recordFile);
      const invocation = spawnInvoke({ handler: HANDLER, queue: s.config.workQueue, budgetMs: idempotency ? IDEMPOTENT_BUDGET_MS : 60_000, env: childEnv });
      let exited = false;
      void invocation.exited.then(() => {
        exited = true;
      });
      await until(() => exited || fileSize(s.recordFile) > before, 15_000);
      await sleep(random() * KILL_WINDOW_MS);
      if (!exited && invocation.child.kill('SIGKILL')) {
        kills++;
        // In the record file too, so that each handled attempt can be placed before or after the kill of its process.
        appendFileSync(s.recordFile, `K ${invocation.child.pid} ${Date.now()}\n`);
      }
      const result = await invocation.exited;
      if (result.signal === null) cleanExits++;
    }
    const killPhaseMs = Date.now() - startedAt;
    await s.drainUntilQuiet();
    const account = await s.account();

    // Assess
    const copyDuplicates = account.duplicates - account.handledTwiceSameCopy;
    const perKill = (count: number): number => (kills === 0 ? 0 : count / kills);
    reportFault(`sigkill-${ackOrder}-batch-${batchSize}${idempotency ? '-idempotent' : ''}`, {
      case: name, idempotency: idempotency ? 'redis' : 'off', seed: SEED, kills, cleanExits, killPhaseMs, sent: account.sent, handled: account.handled, parked: account.parked,
      stillQueued: account.stillQueued, missing: account.missing.length, duplicates: account.duplicates, repeatedEffects: account.repeatedEffects, handledAndParked: account.handledAndParkedIds.length,
      handledTwiceSameCopy: account.handledTwiceSameCopy, copyDuplicates,
      duplicatesPerKill: perKill(account.duplicates), repeatedEffectsPerKill: perKill(account.repeatedEffects), lossesPerKill: perKill(account.missing.length),
    });
    console.log(`[fault] ${name}: ${kills} kills; ${describeAccount(account)}`);
    expect(kills).toBe(KILLS);
    expect(account.strangers).toEqual([]);
    expect(account.stillQueued).toBe(0);
    expect([...account.parkReasons.values()].every((reason) => reason.startsWith('retries exhausted'))).toBe(true);
    if (idempotency) {
      // Only a kill between an effect and its key's completion repeats it: at most the handlers running at once.
      expect(account.missing).toEqual([]);
      expect(account.repeatedEffects).toBeLessThanOrEqual(kills * concurrency);
      // The guard does not change how many copies a kill leaves (up to a batch), only whether a copy
      // runs the handler again: the other extra outcomes (a copy parked as well) keep the bound of off.
      expect(account.duplicates).toBeLessThanOrEqual(kills * batchSize);
    } else if (ackOrder === 'publish-then-ack') {
      expect(account.missing).toEqual([]);
      expect(account.duplicates).toBeLessThanOrEqual(kills * batchSize);
    } else {
      expect(copyDuplicates).toBe(0);
      expect(account.missing.length).toBeLessThanOrEqual(kills * batchSize);
    }
  });
});
