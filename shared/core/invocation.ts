/**
 * One invocation, written once for every mode: the deadlines, the pause, the take loop, the end
 * sequence, the summary and the error it throws. The modes are transports (`Transport` below) that
 * only take messages and settle verdicts: the AMQP 0-9-1 consumer (pull/pull.ts), the `aws:rmq` batch
 * (event/run-event.ts, a finite source) and the AMQP 1.0 receiver (native/native-pull.ts).
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
import type { Delivery } from '../message/copy-message.js';
import type { Handler } from '../message/message.js';
import type { AttemptTracer } from '../observability/attempt-tracer.js';
import type { Logger } from '../observability/logger.js';
import { type InvocationMetrics, noMetrics } from '../observability/metrics.js';
import type { StopReason, Summary } from '../observability/summary.js';
import type { PauseMarker } from '../amqp/pause-marker.js';
import { Lifecycle } from './attempt.js';
import { allFinishedBy, InFlight } from './in-flight.js';
import type { Origin } from './lifecycle-options.js';
import type { ModeSettings } from './mode-settings.js';
import type { Pacer } from './pacer.js';
import { Pause } from './pause.js';
import { type FailureReason, Tally } from './tally.js';
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

/** The three moments of an invocation's budget, epoch ms. */
type Deadlines = {
  /** No message is taken, and no handler started, after it; the handlers' signal aborts. */
  readonly stopTakingAt: number;
  /** Handlers still running are cut off: their attempts count. */
  readonly hardStopAt: number;
  /** Work still unconfirmed is given up, leaving room to close. */
  readonly settleBy: number;
};

/** One message taken: the delivery the lifecycle reads, and where it came from. */
type Taken = { readonly delivery: Delivery; readonly origin: Origin };

/**
 * A mode, as the invocation sees it: a source of messages that settles verdicts its own way.
 * Each transport counts what it takes and settles into the tally it was opened with.
 */
interface Transport {
  /** What the lifecycle does differently on this transport (core/mode-settings.ts). */
  readonly settings: ModeSettings;
  /** Where the retry count travels, when not in `RETRY_HEADER` (native: an annotation). @default RETRY_HEADER */
  readonly retryHeader?: string;
  /** Taken past this, the loop stops (`max-messages`). Event: no limit, the batch is what it is. */
  readonly maxMessages: number;
  /**
   * True when a handler's turn (its place in the concurrency) lasts until its verdict is settled
   * (event: after an unconfirmed copy no handler starts, since the batch comes back whole anyway).
   */
  readonly settleHoldsTurn: boolean;
  /** Aborted, with the error, when nothing can be settled any more: the connection broke (event: or a copy failed). */
  readonly lost: AbortSignal;
  /** Taken and not settled yet: below BATCH_SIZE with nothing arriving, the queue is idle. */
  readonly outstanding: number;
  /** The next message, or undefined after `waitMs` with none. */
  take(waitMs: number): Promise<Taken | undefined>;
  /**
   * Takes at most `prefetch` unsettled messages more from now on; what it holds already is still
   * handed out (pull: a new consumer with that prefetch). Absent: the transport cannot (event, native).
   */
  narrow?(prefetch: number): void;
  /** Why nothing more can be taken although time is left (the consumer was cancelled, a copy failed, the batch is all taken), or undefined. */
  ended(): StopReason | undefined;
  /** What arrived and no handler saw, removed from the transport's buffer (event: the rest of the batch). */
  takeBuffered(): Taken[];
  /** Carries out a verdict through the transport's fallback chain; the work still under way (a copy awaiting its confirm), if any. */
  settle(taken: Taken, verdict: Verdict): Promise<void> | undefined;
  /** Ends the flow of messages (pull: cancel, native: drain); resolves with what arrived meanwhile, which goes back untouched. */
  stopTaking(): Promise<Taken[]>;
  /** After an end without failure: waits for what is still settling, gives back the rest and reads the parking lot's depth. */
  finish(deadlines: Deadlines): Promise<void>;
  /** Closes the connection; never throws. */
  close(): Promise<void>;
  /** How `failure` ends the invocation: the summary's reason, and the error thrown with the summary. */
  failed(failure: Error): Promise<{ readonly reason: FailureReason; readonly error: (summary: Summary) => Error }>;
  /** After an end without failure: an error to throw all the same (pull: a copy came back unroutable). @default none */
  completed?(summary: Summary): Error | undefined;
}

/**
 * What opening a transport found: a transport to take from, or nothing to do (the queue's marker
 * says it is paused, so nothing is taken; or an event batch is empty). `pausedUntil` with a
 * transport: a batch already taken whose queue is paused, each message deferred untried.
 */
type Opened =
  | { readonly transport: Transport; readonly pausedUntil?: number; readonly markerOf: (queue: string) => PauseMarker }
  | { readonly transport: undefined; readonly pausedUntil: number | undefined };

/** Opens a transport: connects, checks, reads the pause marker; on an error it closes what it opened and throws. */
type OpenTransport = (context: { readonly tally: Tally; readonly deadlines: Deadlines; readonly startedAt: number }) => Promise<Opened>;

const NEVER = new AbortController().signal;

/**
 * The moments of a budget. The safety margin is kept inside the budget even when a caller passes a
 * tiny budget: at most half of it.
 * @example invocationDeadlines(1000, 10_000, 0) // { stopTakingAt: 9000, hardStopAt: 9500, settleBy: 9750 }
 */
function invocationDeadlines(safetyMarginMs: number, budgetMs: number, startedAt: number): Deadlines {
  const marginMs = Math.min(safetyMarginMs, budgetMs / 2);
  return { stopTakingAt: startedAt + budgetMs - marginMs, hardStopAt: startedAt + budgetMs - marginMs / 2, settleBy: startedAt + budgetMs - marginMs / 4 };
}

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

/**
 * Takes and hands on messages until the connection breaks, the transport ends, the lifecycle stops (a
 * partner's pause, an open breaker, a store that is down), MAX_MESSAGES were taken, the budget's stop,
 * or the queue is idle; resolves with the reason.
 */
async function takeUntilStop(
  transport: Transport,
  lifecycle: Lifecycle,
  parts: {
    readonly config: Pick<Config, 'idleTimeoutMs' | 'batchSize' | 'concurrency'>;
    readonly tally: Tally;
    readonly deadlines: Deadlines;
    readonly handling: InFlight;
    readonly attempt: (taken: Taken) => Promise<void>;
    readonly giveBack: Array<readonly [Taken, Verdict]>;
  },
): Promise<StopReason> {
  const { config, handling, deadlines } = parts;
  const { lost } = transport;
  // A handler that ignores its signal must not hold the loop past the stop: waits end on either.
  handling.wakeOn(AbortSignal.any([lost, lifecycle.signal]));
  const narrowing = narrowingOf(transport, config);
  for (;;) {
    if (lost.aborted) return 'connection-lost';
    const ended = transport.ended();
    if (ended !== undefined) return ended;
    const stop = lifecycle.stop;
    if (stop !== undefined) return stop;
    if (parts.tally.received >= transport.maxMessages) return 'max-messages';
    const now = Date.now();
    const untilStop = deadlines.stopTakingAt - now;
    if (untilStop <= 0 || lifecycle.signal.aborted) return 'budget';
    narrowing?.check(now, untilStop, parts.tally.received - handling.size);
    if (handling.size >= lifecycle.attemptLimit) {
      await handling.oneFinished();
      continue;
    }
    const waitMs = Math.min(config.idleTimeoutMs, untilStop);
    const taken = await transport.take(waitMs);
    if (taken === undefined) {
      const ended = transport.ended();
      if (ended !== undefined) return ended;
      // Nothing came although the window had room: the queue is idle.
      if (waitMs === config.idleTimeoutMs && transport.outstanding < config.batchSize && !lost.aborted) return 'idle';
      continue;
    }
    // A message that raced the transport's own stop (a copy failed meanwhile) is given back untried.
    const racing = transport.ended();
    if (racing !== undefined) {
      parts.giveBack.push([taken, OUT_OF_TIME_GIVE_BACK]);
      return racing;
    }
    handling.add(parts.attempt(taken));
  }
}

/**
 * When a give-back would count toward the crash-loop limit (pull before RabbitMQ 4.3), a message the
 * invocation holds at its stop is deferred, a copy. So that the case does not arise, the invocation
 * takes fewer messages as the stop nears: once the time left is no more than twice the time a full
 * prefetch (BATCH_SIZE) takes to try at the pace so far (twice: the pace may drop), the transport
 * narrows its prefetch to CONCURRENCY (once): what it holds is tried before the stop, and at most
 * CONCURRENCY more arrive at a time. The pace is the attempts finished per ms since the first take; it is read only after
 * CONCURRENCY attempts finished. Undefined where nothing is to be gained: a give-back that counts
 * nothing, a transport that cannot narrow, or CONCURRENCY at or above BATCH_SIZE.
 * @example
 * const narrowing = narrowingOf(transport, config);
 * narrowing?.check(Date.now(), untilStop, finished); // in the take loop
 */
function narrowingOf(
  transport: Transport,
  config: Pick<Config, 'batchSize' | 'concurrency'>,
): { check(now: number, untilStop: number, finished: number): void } | undefined {
  const { narrow } = transport;
  if (narrow === undefined || !transport.settings.giveBackCounts || config.concurrency >= config.batchSize) return undefined;
  let startedAt: number | undefined;
  let done = false;
  return {
    check(now, untilStop, finished) {
      startedAt ??= now;
      if (done || finished < config.concurrency) return;
      const fullPrefetchMs = (config.batchSize * (now - startedAt)) / finished;
      if (untilStop > 2 * fullPrefetchMs) return;
      done = true;
      narrow.call(transport, config.concurrency);
    },
  };
}

export { invocationDeadlines, narrowingOf, runInvocation };
export type { Deadlines, InvocationOptions, OpenTransport, Taken, Transport };
