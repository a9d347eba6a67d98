/**
 * One invocation, written once for every mode: the deadlines, the pause, the take loop
 * (core/take-loop.ts), the end sequence, the summary and the error it throws. The modes are
 * transports (core/transport.ts) that only take messages and settle verdicts: the AMQP 0-9-1 consumer (pull/pull-transport.ts), the `aws:rmq` batch
 * (event/run-event.ts, a finite source) and the AMQP 1.0 receiver (native/native-transport.ts).
 *
 * A message's fate is decided in three places, and only there: the lifecycle (core/attempt.ts) gives
 * each message taken a verdict; the transport's `settle` carries it out through its one fallback chain
 * (a copy that fails is given back, say); and the end sequence below gives a verdict to what was taken
 * but never tried (deferred when the queue is paused or the breaker opened, given back when time ran out)
 * and gives back, untouched, what arrived after the take loop stopped (unless, where a give-back
 * counts, one more would bring it to the crash-loop limit: then it is deferred).
 */
import type { Config } from '../config/config.js';
import type { IdempotencyGuard } from '../idempotency/guard.js';
import type { Handler } from '../message/message.js';
import type { AttemptTracer } from '../observability/attempt-tracer.js';
import type { Logger } from '../observability/logger.js';
import { type InvocationMetrics, noMetrics } from '../observability/metrics.js';
import type { Summary } from '../observability/summary.js';
import { Lifecycle } from './attempt.js';
import { allFinishedBy, InFlight } from './in-flight.js';
import type { Pacer } from './pacer.js';
import { Pause } from './pause.js';
import { takeUntilStop } from './take-loop.js';
import { Tally } from './tally.js';
import { type Deadlines, invocationDeadlines, type OpenTransport, type Taken, type Transport } from './transport.js';
import { OUT_OF_TIME_GIVE_BACK, type Verdict } from './verdict.js';

/** What every invocation is given, in every mode. */
type InvocationOptions = {
  readonly config: Config;
  readonly handler: Handler;
  /** Time this invocation may take, all included (Lambda: `getRemainingTimeInMillis()`). */
  readonly budgetMs: number;
  readonly log: Logger;
  /** @default Math.random */
  readonly random?: () => number;
  /** Told each handler error and retry delay; the caller flushes it with the summary. @default noMetrics */
  readonly metrics?: InvocationMetrics;
  /** Runs each handler call at most once per idempotency key (the wrapper's guard). @default none */
  readonly idempotency?: IdempotencyGuard;
  /** Starts one span per attempt, which its settlement ends. @default noTracer: tracing off */
  readonly tracer?: AttemptTracer;
  /** Paces the handler starts (the wrapper's, when `config.rateLimit` is set). @default none: no limit */
  readonly pacer?: Pacer;
};

const NEVER = new AbortController().signal;

/**
 * Runs one invocation on the transport `open` opens: takes messages until the queue is idle,
 * MAX_MESSAGES, the budget's stop, a pause, an open breaker, a store that is down or the transport's
 * own end; hands each to the lifecycle at the concurrency it allows and settles its verdict; then
 * settles what is in hand by the hard stop and gives back the rest. Resolves with the summary, or
 * throws the transport's error (with the summary) when the invocation failed.
 * @example const summary = await runInvocation(openPull(options), options);
 */
async function runInvocation(open: OpenTransport, options: InvocationOptions): Promise<Summary> {
  const { config, log } = options;
  const startedAt = Date.now();
  const deadlines = invocationDeadlines(config.safetyMarginMs, options.budgetMs, startedAt);
  const tally = new Tally(options.tracer);
  const opened = await open({ tally, deadlines, startedAt });
  if (opened.transport === undefined) {
    // An earlier invocation heard the partner say "slow down": nothing was taken.
    if (opened.pausedUntil !== undefined) {
      tally.paused(opened.pausedUntil);
      tally.stop('paused');
    }
    return tally.finish(startedAt);
  }
  const { transport } = opened;
  const pause = new Pause({ pausedUntil: opened.pausedUntil, markerOf: opened.markerOf, by: config.functionName, log, tally });
  const lifecycle = new Lifecycle({
    config: transport.retryHeader === undefined ? config : { ...config, retryHeader: transport.retryHeader },
    handler: options.handler,
    guard: options.idempotency,
    settings: transport.settings,
    log,
    metrics: options.metrics ?? noMetrics,
    random: options.random ?? Math.random,
    tally,
    stopAt: deadlines.stopTakingAt,
    startedAt,
    hardStopAt: deadlines.hardStopAt,
    pacer: options.pacer,
    pause,
  });
  // Lost while it opened, the abort event has fired already: it fails the invocation all the same.
  let failure = transport.lost.aborted ? (transport.lost.reason as Error) : undefined;
  transport.lost.addEventListener('abort', () => {
    failure ??= transport.lost.reason as Error;
  });
  try {
    await takeAndSettle(transport, lifecycle, { config, tally, deadlines, idempotent: options.idempotency !== undefined, log });
    await pause.written(deadlines.settleBy - Date.now());
    if (!transport.lost.aborted) await transport.finish(deadlines);
  } catch (error) {
    failure ??= error as Error;
  } finally {
    await transport.close();
  }
  if (failure !== undefined) {
    const { reason, error } = await transport.failed(failure);
    tally.fail(reason);
    throw error(tally.finish(startedAt));
  }
  const summary = tally.finish(startedAt);
  const error = transport.completed?.(summary);
  if (error !== undefined) throw error;
  if (summary.requeued > 0) log.warn('messages not settled in time went back to their queue as they were', { count: summary.requeued });
  return summary;
}

/** The take loop and the end sequence of one invocation. */
async function takeAndSettle(
  transport: Transport,
  lifecycle: Lifecycle,
  parts: { readonly config: Config; readonly tally: Tally; readonly deadlines: Deadlines; readonly idempotent: boolean; readonly log: Logger },
): Promise<void> {
  const { tally, deadlines } = parts;
  const { lost } = transport;
  const handling = new InFlight();
  const settling = new InFlight();
  const settle = (taken: Taken, verdict: Verdict | undefined): Promise<void> | undefined => {
    if (verdict === undefined || lost.aborted) return undefined;
    if (verdict.kind === 'ack' && verdict.unkeyed) tally.unkeyed();
    const work = transport.settle(taken, verdict);
    if (work !== undefined) settling.add(work);
    return work;
  };
  const attempt = (taken: Taken): Promise<void> =>
    lifecycle.attempt(taken.delivery, taken.origin).then((verdict) => (transport.settleHoldsTurn ? settle(taken, verdict) : void settle(taken, verdict)));
  // Given back only after the flow stopped: a give-back now would come straight back to this invocation.
  const giveBack: Array<readonly [Taken, Verdict]> = [];

  const stoppedBecause = await takeUntilStop(transport, lifecycle, { ...parts, handling, attempt, giveBack });
  tally.stop(stoppedBecause);
  // What arrived and no handler saw: deferred untried when the queue is paused, the breaker opened or
  // the store is down, and (where a give-back would count toward the crash-loop limit) when time or
  // MAX_MESSAGES ran out; otherwise given back.
  // A delivery that arrives after the queue was called idle was on its way: one large one is warned of.
  const afterIdle: Taken[] = [];
  if (!lost.aborted) {
    const outOfTime = lifecycle.stop === undefined;
    for (const taken of transport.takeBuffered()) {
      if (stoppedBecause === 'idle') afterIdle.push(taken);
      // After a copy failed no other is tried: what no handler saw goes back untouched.
      const verdict = stoppedBecause === 'publish-failed' ? OUT_OF_TIME_GIVE_BACK : lifecycle.untried(taken.delivery, taken.origin, outOfTime);
      if (verdict.kind === 'give-back') giveBack.push([taken, verdict]);
      else settle(taken, verdict);
    }
  }
  // The work in hand is settled while the flow still runs: a quorum queue may ignore acks sent between
  // a consumer's cancel and the channel's close (rabbitmq-server#10327), bringing them back as duplicates.
  // With idempotency on, running handlers are waited for even after the connection broke (up to the
  // hard stop): their keys then end completed or released, not held in progress until the hard stop.
  await allFinishedBy(handling, deadlines.hardStopAt, parts.idempotent ? NEVER : lost);
  // Handlers still running ignored their signal: their attempts count, and whatever they return
  // later settles nothing. The handler may still act on the message: as with any retry, it must be idempotent.
  for (const [delivery, verdict, origin] of lifecycle.cutOffRunning()) settle({ delivery, origin }, verdict);
  await allFinishedBy(settling, deadlines.settleBy, lost);
  if (!lost.aborted) {
    // Arrived while the work in hand settled, never handed to a handler: back to the queue untouched,
    // but for a delivery that one more counted give-back would bring to the crash-loop limit: deferred
    // (lateArrival). Those that came before the cancel are settled before it, so their acks are not held.
    const late = (taken: Taken): void => {
      if (stoppedBecause === 'idle') afterIdle.push(taken);
      const verdict = stoppedBecause === 'publish-failed' ? OUT_OF_TIME_GIVE_BACK : lifecycle.lateArrival(taken.delivery, taken.origin);
      if (verdict.kind === 'give-back') giveBack.push([taken, verdict]);
      else settle(taken, verdict);
    };
    for (const taken of transport.takeBuffered()) late(taken);
    await allFinishedBy(settling, deadlines.settleBy, lost);
    for (const taken of await transport.stopTaking()) late(taken);
    warnLargeAfterIdle(parts, afterIdle);
    for (const [taken, verdict] of giveBack) settle(taken, verdict);
    await allFinishedBy(settling, deadlines.settleBy, lost);
  }
  // A handler still running when the loop stopped for another reason may have opened it.
  tally.breakerOpened(lifecycle.breakerOpened);
  lifecycle.end();
}

/**
 * A body at least this large can take longer than IDLE_TIMEOUT_MS to arrive (20 MB from a quorum queue
 * on RabbitMQ 3.10.8, on one machine: 0.6-0.9 s against the 0.5 s default); a small late arrival was
 * only published as the window closed.
 */
const LARGE_BODY_BYTES = 1024 * 1024;

/**
 * A large delivery came after the queue was called idle: it was on its way, and went back untried.
 * At the head of the queue it would do the same at every invocation, and hold up what is behind it,
 * so the log says what to raise.
 */
function warnLargeAfterIdle(parts: { readonly config: Pick<Config, 'idleTimeoutMs'>; readonly log: Logger }, arrivals: readonly Taken[]): void {
  const largest = Math.max(0, ...arrivals.map((taken) => taken.delivery.content.length));
  if (largest < LARGE_BODY_BYTES) return;
  parts.log.warn(
    `a message of ${largest} bytes arrived just after the queue was called idle (no delivery for IDLE_TIMEOUT_MS, ${parts.config.idleTimeoutMs} ms) and went back untried: a large body can take longer than that to arrive, and would come back the same way at every invocation, ahead of the messages behind it; raise IDLE_TIMEOUT_MS (advanced.idleTimeoutMs) above the time one such message takes`,
    { count: arrivals.length, largestBodyBytes: largest, idleTimeoutMs: parts.config.idleTimeoutMs },
  );
}

export { runInvocation };
export type { InvocationOptions };
