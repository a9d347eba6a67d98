import { statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../helpers/fakes.js';
import { PullAbortedError } from '../../shared/core/invocation-errors.js';
import { runPull } from '../../shared/pull/pull.js';
import { AMQP_URL, sleep } from '../helpers/broker.js';
import { FaultScenario } from '../helpers/fault-scenario.js';
import { reportFault } from '../helpers/fault-report.js';
import { createFlakyRecorder } from '../helpers/flaky-recorder.js';
import { FAULT_IDEMPOTENCY_ENV } from '../helpers/idempotency-stores.js';
import { describeAccount } from '../helpers/message-account.js';
import { seededRandom, seedFromEnv } from '../helpers/seeded-random.js';
import { useProxyToBroker } from '../helpers/tcp-proxy.js';

/**
 * Cut the TCP connection mid-batch: the function talks to the broker through a local proxy that
 * destroys every connection at a random moment of an invocation, many times over. Each cut invocation
 * must end with a clear error soon after, and in the end no message may be missing.
 */
const SEED = seedFromEnv('FAULT_SEED');
const CUTS = Number(process.env.FAULT_CUTS ?? '15');

describe('a TCP connection cut mid-batch', () => {
  const proxy = useProxyToBroker(AMQP_URL);
  let scenario: FaultScenario | undefined;

  afterEach(async () => {
    await scenario?.cleanup();
    scenario = undefined;
  });

  it.each([
    { idempotency: false, title: '' },
    { idempotency: true, title: ' (idempotency on, Redis)' },
  ])('loses nothing, and every cut invocation ends with a connection error$title', async ({ idempotency }) => {
    // Prepare
    console.log(`[fault] tcp-cut seed ${SEED} (rerun with FAULT_SEED=${SEED})`);
    const random = seededRandom(SEED);
    scenario = await FaultScenario.prepare({
      url: proxy().url(AMQP_URL),
      label: 'cut',
      messages: 2000,
      env: {
        MAX_RETRIES: '4',
        BACKOFF_INITIAL_MS: '20',
        BACKOFF_MULTIPLIER: '2',
        BACKOFF_MAX_MS: '160',
        BACKOFF_JITTER: '0',
        IDLE_TIMEOUT_MS: '1000',
        ...(idempotency ? FAULT_IDEMPOTENCY_ENV : {}),
      },
    });
    const s = scenario;
    const handler = createFlakyRecorder({ recordFile: s.recordFile, failPercent: 70, seed: String(SEED), workMs: 1 });
    let cuts = 0;
    const endedWith: string[] = [];
    const secondsToNotice: number[] = [];

    // Act
    for (let round = 0; cuts < CUTS && round < CUTS * 3; round++) {
      // Keep work on the queue so that every cut lands mid-batch.
      if ((await s.inFlight()) < 200 && s.ids.length < 10_000) await s.publish(1000);
      const before = fileSize(s.recordFile);
      let cutAt = 0;
      const invocation = runPull({ config: s.config, handler, budgetMs: 30_000, log: silentLogger, idempotency: s.idempotency }).then(
        (summary) => `completed (${summary.stoppedBecause})`,
        (error: Error) => {
          if (cutAt > 0) secondsToNotice.push((Date.now() - cutAt) / 1000);
          return error instanceof PullAbortedError ? `${error.name}: ${error.message}` : `other error ${error.name}: ${error.message}`;
        },
      );
      let settled = false;
      void invocation.then(() => {
        settled = true;
      });
      while (!settled && fileSize(s.recordFile) === before) await sleep(5);
      await sleep(random() * 600);
      if (!settled && proxy().cutAll() > 0) {
        cutAt = Date.now();
        cuts++;
      }
      endedWith.push(await invocation);
    }
    await s.drainUntilQuiet();
    const account = await s.account();

    // Assess
    const aborted = endedWith.filter((e) => e.startsWith('PullAbortedError'));
    reportFault(idempotency ? 'tcp-cut-idempotent' : 'tcp-cut', {
      idempotency: idempotency ? 'redis' : 'off',
      seed: SEED,
      cuts,
      invocations: endedWith.length,
      abortedWithError: aborted.length,
      sent: account.sent,
      handled: account.handled,
      parked: account.parked,
      missing: account.missing.length,
      duplicates: account.duplicates,
      repeatedEffects: account.repeatedEffects,
      handledAndParked: account.handledAndParkedIds.length,
      handledTwiceSameCopy: account.handledTwiceSameCopy,
      duplicatesPerCut: account.duplicates / Math.max(1, cuts),
      repeatedEffectsPerCut: account.repeatedEffects / Math.max(1, cuts),
      maxSecondsToNotice: Math.max(0, ...secondsToNotice),
      exampleError: aborted[0],
    });
    console.log(`[fault] tcp-cut: ${cuts} cuts; ${describeAccount(account)}`);
    expect(cuts).toBe(CUTS);
    expect(endedWith.filter((e) => e.startsWith('other error'))).toEqual([]);
    expect(aborted.length).toBe(cuts);
    expect(aborted[0]).toMatch(/Invocation ended early: .*the next invocation carries on/);
    expect(Math.max(0, ...secondsToNotice)).toBeLessThan(5);
    expect(account.missing).toEqual([]);
    expect(account.strangers).toEqual([]);
    expect(account.stillQueued).toBe(0);
    // A cut leaves up to a batch of extra copies, guard or not; the guard only stops them repeating an effect.
    expect(account.duplicates).toBeLessThanOrEqual(cuts * s.config.batchSize);
    // With it, only a handler between its effect and its key's completion can repeat: at most the handlers running at once.
    if (idempotency) expect(account.repeatedEffects).toBeLessThanOrEqual(cuts * s.config.concurrency);
  });
});

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
