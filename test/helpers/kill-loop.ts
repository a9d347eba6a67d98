import { appendFileSync, statSync } from 'node:fs';
import { sleep } from './broker.js';
import type { FaultScenario } from './fault-scenario.js';
import { spawnInvoke } from './invoke-child.js';
import { seededRandom, seedFromEnv } from './seeded-random.js';

/** A kill lands uniformly within this long after the child's first handled attempt. */
const KILL_WINDOW_MS = 400;
const HANDLER = 'test/faults/handlers/flaky-recorder.ts';

/**
 * The knobs of the kill scenarios: FAULT_SEED (printed), FAULT_KILLS (default 25 per case),
 * FAULT_MESSAGES (default 600; topped up by half that whenever fewer than three batches (at least
 * 100) are left on their way, so every kill finds work, up to FAULT_MESSAGES per kill in all),
 * FAULT_KEEP_RECORDS (a folder: each case's record file is copied there, with a `K <pid> <epochMs>`
 * line for every kill).
 */
type KillKnobs = { readonly seed: number; readonly kills: number; readonly messages: number };

/** The knobs read from `env`; the seed is drawn at random when FAULT_SEED is not set. */
function killKnobs(env: NodeJS.ProcessEnv = process.env): KillKnobs {
  return { seed: seedFromEnv('FAULT_SEED', env), kills: Number(env.FAULT_KILLS ?? '25'), messages: Number(env.FAULT_MESSAGES ?? '600') };
}

/**
 * The retry settings of every kill case: most attempts fail (the recorder's FAULT_FAIL_PERCENT=70)
 * and delays are 20-160 ms, so a kill finds messages between attempts.
 */
function killCaseEnv(batchSize: number, concurrency: number): Record<string, string> {
  return {
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
  };
}

type KillLoopOptions = {
  readonly scenario: FaultScenario;
  readonly knobs: KillKnobs;
  /** The invocations' BATCH_SIZE: at least three batches (and 100) are kept on their way. */
  readonly batchSize: number;
  readonly budgetMs: number;
};

type KillLoopResult = {
  readonly kills: number;
  /** Invocations that ended before their kill (they found nothing to do). */
  readonly cleanExits: number;
  readonly killPhaseMs: number;
};

/**
 * SIGKILLs child invocations of the pull function (the flaky recorder handler, 70 % of attempts
 * failing) at random moments, again and again, while there is work: each child is killed within
 * KILL_WINDOW_MS of its first handled attempt, `knobs.kills` times (giving up after three times as
 * many invocations). Every kill is
 * appended to the record file as `K <pid> <epochMs>`, so each handled attempt can be placed before
 * or after the kill of its process.
 */
async function killRepeatedly(options: KillLoopOptions): Promise<KillLoopResult> {
  const { scenario: s, knobs, batchSize } = options;
  // The top-ups stop here, a bound on the run's size. At batch 100 an idle machine gets through about
  // 300 messages per kill: a cap of 10 loads (6 000) ran out after 23 kills, and the children that
  // came after found nothing to do and exited before their kill.
  const maxSent = knobs.messages * knobs.kills;
  const random = seededRandom(knobs.seed);
  const env = { ...s.env, FAULT_RECORD_FILE: s.recordFile, FAULT_FAIL_PERCENT: '70', FAULT_SEED: String(knobs.seed), LOG_LEVEL: 'error' };
  let kills = 0;
  let cleanExits = 0;
  const startedAt = Date.now();
  for (let round = 0; kills < knobs.kills && round < knobs.kills * 3; round++) {
    // Keep work on the queue so that every kill lands while messages are retrying: at least three
    // batches on their way, or an invocation can finish its work and exit before the kill.
    if ((await s.inFlight()) < Math.max(100, 3 * batchSize) && s.ids.length < maxSent) await s.publish(knobs.messages / 2);
    const before = fileSize(s.recordFile);
    const invocation = spawnInvoke({ handler: HANDLER, queue: s.config.workQueue, budgetMs: options.budgetMs, env });
    let exited = false;
    void invocation.exited.then(() => {
      exited = true;
    });
    await until(() => exited || fileSize(s.recordFile) > before, 15_000);
    await sleep(random() * KILL_WINDOW_MS);
    if (!exited && invocation.child.kill('SIGKILL')) {
      kills++;
      appendFileSync(s.recordFile, `K ${invocation.child.pid} ${Date.now()}\n`);
    }
    const result = await invocation.exited;
    if (result.signal === null) cleanExits++;
  }
  return { kills, cleanExits, killPhaseMs: Date.now() - startedAt };
}

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

export { killCaseEnv, killKnobs, killRepeatedly };
