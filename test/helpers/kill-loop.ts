import { appendFileSync, statSync } from 'node:fs';
import { sleep } from './broker.js';
import type { FaultScenario } from './fault-scenario.js';
import { spawnInvoke } from './invoke-child.js';
import { seededRandom, seedFromEnv } from './seeded-random.js';

/** A kill lands uniformly within this long after the child's first handled attempt. */
const KILL_WINDOW_MS = 400;
const HANDLER = 'test/faults/handlers/flaky-recorder.ts';

/**
 * The knobs of the kill scenarios: FAULT_SEED (printed), FAULT_KILLS (every case's kills; by default
 * killsFor's), FAULT_MESSAGES (default 600; topped up by half that whenever fewer than three batches
 * (at least 100) are left on their way, so every kill finds work, up to FAULT_MESSAGES per kill in
 * all), FAULT_KEEP_RECORDS (a folder: each case's record file is copied there, with a
 * `K <pid> <epochMs>` line for every kill).
 */
type KillKnobs = {
  readonly seed: number;
  /** FAULT_KILLS; undefined: each case's default (killsFor). */
  readonly kills: number | undefined;
  readonly messages: number;
};

/** The knobs read from `env`; the seed is drawn at random when FAULT_SEED is not set. */
function killKnobs(env: NodeJS.ProcessEnv = process.env): KillKnobs {
  const kills = env.FAULT_KILLS === undefined ? undefined : Number(env.FAULT_KILLS);
  return { seed: seedFromEnv('FAULT_SEED', env), kills, messages: Number(env.FAULT_MESSAGES ?? '600') };
}

/**
 * A case's kills: FAULT_KILLS, else 15 at batch 1 and 8 at a larger batch (25 for every case until
 * 2026-11-29). Each kill costs a child's start (about 1 s: node, tsx, the CLI), most of a case's time,
 * so each case gets what hits its windows. The bounds are per kill and hold the same at any count.
 * At batch 1 a kill lands between a copy's publish and its original's ack 0.1 to 0.5 times per kill
 * (runs of 25 and 10 kills on 3.10.8 and 4.3.6, 2026-11-25 to 29; mean about 0.35): 15 kills hit it
 * about 5 times, and at that rate miss it altogether in about 0.5 % of runs (10 kills: 3 %). At batch 100 every kill
 * leaves copies in flight (20 to 30 duplicates per kill; 0.4 to 3.5 with idempotency on), so 8 kills
 * hit the window dozens of times. The loss window of `ack-then-publish` (between the ack and the
 * copy's confirm) was hit about once in 25 kills and not at all in some runs of 25, so neither size
 * is sure to meet it: FAULT_KILLS looks for it harder.
 */
function killsFor(knobs: KillKnobs, batchSize: number): number {
  return knobs.kills ?? (batchSize === 1 ? 15 : 8);
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
    // Long enough that a child does not stop between two short delays (the drain after the kills
    // waits less: KILL_DRAIN_IDLE_MS).
    IDLE_TIMEOUT_MS: '2000',
    SAFETY_MARGIN_MS: '1000',
  };
}

/**
 * The idle timeout of the healthy drain after the kills (drainUntilQuiet's `idleTimeoutMs`): its
 * 1.5 s of quiet already outlasts the 160 ms delays, and with the children's 2 s each drain
 * invocation waited 2 s on an empty queue, twice or more per case.
 */
const KILL_DRAIN_IDLE_MS = 300;

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
 * KILL_WINDOW_MS of its first handled attempt, `killsFor` times (giving up after three times as
 * many invocations). Every kill is
 * appended to the record file as `K <pid> <epochMs>`, so each handled attempt can be placed before
 * or after the kill of its process.
 */
async function killRepeatedly(options: KillLoopOptions): Promise<KillLoopResult> {
  const { scenario: s, knobs, batchSize } = options;
  // The top-ups stop here, a bound on the run's size. At batch 100 an idle machine gets through about
  // 300 messages per kill: a cap of 10 loads (6 000) ran out after 23 kills, and the children that
  // came after found nothing to do and exited before their kill.
  const wanted = killsFor(knobs, batchSize);
  const maxSent = knobs.messages * wanted;
  const random = seededRandom(knobs.seed);
  const env = { ...s.env, FAULT_RECORD_FILE: s.recordFile, FAULT_FAIL_PERCENT: '70', FAULT_SEED: String(knobs.seed), LOG_LEVEL: 'error' };
  let kills = 0;
  let cleanExits = 0;
  const startedAt = Date.now();
  for (let round = 0; kills < wanted && round < wanted * 3; round++) {
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

export { KILL_DRAIN_IDLE_MS, killCaseEnv, killKnobs, killRepeatedly, killsFor };
