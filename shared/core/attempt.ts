/**
 * The lifecycle of one message, written once for every mode: read its retry count and check it for a
 * crash loop (core/admission.ts), wait out a pause and the rate limit's turn (core/start-line.ts), run the idempotency guard (core/guarded-call.ts) and the handler within the budget,
 * decide retry or park (core/failure-verdicts.ts), and keep the circuit breaker. It returns a verdict
 * (core/verdict.ts) and publishes, acks or nacks nothing: each mode settles verdicts its own way (pull/, event/).
 * Each attempt gets a span (core/attempt-spans.ts, through the tally): started here, told the
 * verdict here, ended where the mode reports the settlement.
 *
 * One lifecycle serves one invocation; it holds what an invocation learns (the breaker, the
 * crash-loop parks made, the store's health) and the handlers still running, which the
 * hard stop cuts off: their attempts count, and whatever they return later settles nothing.
 */
import { isNamedError } from '../errors.js';
import { LiveList } from '../live-list.js';
import type { IdempotencyOutcome } from '../idempotency/guard.js';
import { guardRefusalOf } from '../idempotency/refusal.js';
import { toBoomerangMessage } from '../message/boomerang-message.js';
import type { Delivery } from '../message/copy-message.js';
import { readRetryNo } from '../message/headers.js';
import type { BoomerangMessage } from '../message/message.js';
import { type AttemptSpan, NO_SPAN } from '../observability/attempt-tracer.js';
import { errorFacts } from '../retry/decide-retry.js';
import { type AdmissionRules, parkUntried, retryNoOf } from './admission.js';
import { AttemptDeadlines, effectiveLimitMs, isThenable } from './attempt-deadlines.js';
import { allowedConcurrency, recordOutcome, startBreaker } from './circuit-breaker.js';
import { givenBackReachesLimit } from './crash-loop.js';
import { type AttemptSpans, recorded } from './attempt-spans.js';
import { FailureVerdicts, type Stop } from './failure-verdicts.js';
import { GuardedCall, type SlotHold } from './guarded-call.js';
import type { LifecycleOptions, Origin } from './lifecycle-options.js';
import { Pause } from './pause.js';
import { cutOff } from './recorded-failures.js';
import { StartLine } from './start-line.js';
import { ACK, ACK_UNKEYED, DUPLICATE, OUT_OF_TIME_GIVE_BACK, type Verdict } from './verdict.js';

/** A handler call under way, in the running list until its outcome (or the hard stop) takes it out. */
type Running<O> = { index: number; readonly delivery: Delivery; readonly message: BoomerangMessage; readonly origin: O };

/**
 * The lifecycle of the messages of one invocation.
 * @example
 * const lifecycle = new Lifecycle({ config, handler, settings, log, metrics, random: Math.random, tally, stopAt, hardStopAt });
 * const verdict = await lifecycle.attempt(delivery, { queue: config.workQueue });
 */
class Lifecycle<O extends Origin = Origin> {
  private breaker;
  private crashLoopsParked = 0;
  /** A partner's "slow down": while it holds, nothing is tried and untried messages wait it out. */
  private readonly pause: Pause;
  private readonly running = new LiveList<Running<O>>();
  private readonly abort = new AbortController();
  /** Aborted when the lifecycle stops for good (breaker, store down): the starts waiting for the rate limit leave the line. */
  private readonly stopping = new AbortController();
  private readonly abortTimer: NodeJS.Timeout;
  /** Read once: AbortController#signal is a checked getter, too slow to read per message. */
  private readonly budgetSignal: AbortSignal;
  /** What the crash-loop check reads besides the delivery, made once. */
  private readonly admission: AdmissionRules;
  /** The waits before a start: a pause that ends before the stop, the rate limit's turn. */
  private readonly startLine: StartLine;
  /** Each attempt's time limit; its context (the handler's signal) comes with its deadline. */
  private readonly deadlines: AttemptDeadlines;
  private readonly spans: AttemptSpans;
  private readonly verdicts: FailureVerdicts;
  /** With a guard: its calls, their handler slots apart from the store's calls around them, and the store's health. */
  private readonly guarded: GuardedCall | undefined;

  public constructor(private readonly options: LifecycleOptions) {
    this.spans = options.tally.spans;
    this.breaker = startBreaker(options.config.breakerThreshold);
    this.admission = { config: options.config, settings: options.settings };
    this.pause = options.pause ?? new Pause({ log: options.log, tally: options.tally });
    this.budgetSignal = this.abort.signal;
    const { attemptTimeoutMs, functionName } = options.config;
    this.deadlines = new AttemptDeadlines(
      effectiveLimitMs(attemptTimeoutMs, options.stopAt - (options.startedAt ?? Date.now())),
      this.budgetSignal,
      functionName,
    );
    this.abortTimer = setTimeout(() => this.abort.abort(new Error('invocation budget exhausted')), Math.max(0, options.stopAt - Date.now()));
    // Paced: the summary says so (pacedMs), even when no start had to wait.
    if (options.pacer !== undefined) options.tally.paced(0);
    // Aborted at the budget's stop or when the lifecycle stops for good: the waits for a turn or a pause's end leave the line.
    const leaveLine = AbortSignal.any([this.abort.signal, this.stopping.signal]);
    const stopped = (): boolean => this.stop !== undefined;
    this.startLine = new StartLine({
      pause: this.pause,
      pacer: options.pacer,
      stopAt: options.stopAt,
      leaveLine,
      tally: options.tally,
      stopped,
    });
    this.verdicts = new FailureVerdicts(options, this.pause);
    this.guarded =
      options.guard === undefined
        ? undefined
        : new GuardedCall({
            ...options,
            guard: options.guard,
            deadlines: this.deadlines,
            pause: this.pause,
            leaveLine,
            concurrency: () => this.concurrency,
            stopped,
            onStoreDown: () => this.stopping.abort(),
          });
  }

  /** Aborted at the budget's stop (each handler's own signal also aborts at its attempt's deadline). */
  public get signal(): AbortSignal {
    return this.budgetSignal;
  }

  /** The time limit each attempt of this invocation has (`attemptTimeoutMs`, bounded by the budget). */
  public get attemptLimitMs(): number {
    return this.deadlines.limitMs;
  }

  /**
   * Why no further message should go to a handler (the queue is paused past the budget's stop, the
   * breaker opened, the store is down), or undefined. A pause that ends before the stop is no stop:
   * the attempts wait it out.
   */
  public get stop(): Stop | undefined {
    if (this.pause.holds() && this.pause.until >= this.options.stopAt) return 'paused';
    if (this.breaker.state === 'open') return 'breaker-open';
    return this.guarded?.storeDown === true ? 'idempotency-store-down' : undefined;
  }

  /** How many handlers may run at once now: 1 while the breaker probes, none once it opened. */
  public get concurrency(): number {
    return allowedConcurrency(this.breaker, this.options.config.concurrency);
  }

  /**
   * How many attempts the take loop keeps under way at once: the concurrency; with a guard, twice it,
   * so that the store's calls of the next messages overlap the running handlers (core/handler-slots.ts),
   * while the handler calls themselves still run at most `concurrency` at once.
   */
  public get attemptLimit(): number {
    return this.guarded === undefined ? this.concurrency : 2 * this.concurrency;
  }

  public get breakerOpened(): boolean {
    return this.breaker.state === 'open';
  }

  /**
   * Everything that happens to one delivery, up to its verdict. Resolves with `undefined` when the
   * hard stop cut the handler off first (`cutOffRunning` gave its verdict then).
   *
   * Written without `async` on the path of a message that needs no wait (no pause, no rate limit, no
   * guard): an async function's suspension copies its frame to the heap, and this one's was the
   * largest allocation per message in the success path (about 0.8 kB, measured).
   */
  public attempt(delivery: Delivery, origin: O): Promise<Verdict | undefined> {
    try {
      return this.attemptFrom(delivery, origin);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private attemptFrom(delivery: Delivery, origin: O): Promise<Verdict | undefined> {
    const { config, log } = this.options;
    const retryNo = retryNoOf(delivery, origin, config, log);
    // Tracing off: no span call at all on the success path, so that off costs nothing per message.
    const traced = this.spans.on;
    const span = traced ? this.spans.start(delivery, origin.queue, retryNo) : NO_SPAN;
    const park = parkUntried(delivery, origin, this.crashLoopsParked, this.admission);
    if (park !== undefined) {
      if (park.crashLoop) this.crashLoopsParked++;
      return Promise.resolve(recorded(span, false, this.verdicts.park(delivery, retryNo, park.error, park.reason, undefined)));
    }
    if (this.stop === undefined && this.startLine.waits) return this.afterWaits(delivery, origin, retryNo, span, traced);
    return this.start(delivery, origin, retryNo, span, traced);
  }

  /** Waits in the start line (a pause that ends before the stop, the rate limit's turn), then starts: unless it left the line first. */
  private async afterWaits(delivery: Delivery, origin: O, retryNo: number, span: AttemptSpan, traced: boolean): Promise<Verdict | undefined> {
    if (!(await this.startLine.wait())) return recorded(span, false, this.untriedVerdict(delivery, this.stop === undefined));
    // Awaited, not returned: a promise returned from an async function takes two more turns to
    // resolve it, and the verdict that opened the breaker would settle after those it stopped.
    const verdict = await this.start(delivery, origin, retryNo, span, traced);
    return verdict;
  }

  /**
   * Calls the handler (through the guard, when there is one), bound by its deadline: a call that never
   * settles fails with HandlerTimeoutError. Tracing on: the call runs inside its span (a closure per
   * message, so only then).
   */
  private start(delivery: Delivery, origin: O, retryNo: number, span: AttemptSpan, traced: boolean): Promise<Verdict | undefined> {
    // The queue was paused, the breaker opened, or the store went down, while this one waited for a turn.
    if (this.stop !== undefined) return Promise.resolve(recorded(span, false, this.untriedVerdict(delivery, false)));
    const message = toBoomerangMessage(delivery, origin.queue, retryNo);
    const run: Running<O> = { index: -1, delivery, message, origin };
    this.running.add(run);
    if (this.guarded !== undefined) return this.guardedAttempt(this.guarded, run, span, traced);
    const { handler } = this.options;
    let called: Promise<void> | void;
    try {
      const window = this.deadlines.current();
      called = traced
        ? span.run(() => this.deadlines.bound(handler(message, window.context), window))
        : this.deadlines.bound(handler(message, window.context), window);
    } catch (thrown) {
      return Promise.resolve(this.caught(run, span, thrown, undefined));
    }
    // A handler that returned no promise is done: no turn of the event loop for it. (`bound` gives a
    // native promise, which Promise.resolve returns as it is.)
    if (!isThenable(called)) return Promise.resolve(this.done(run, span, traced));
    return Promise.resolve(called).then(
      () => this.done(run, span, traced),
      (thrown: unknown) => this.caught(run, span, thrown, undefined),
    );
  }

  /** The guard's run of the call (`guarded`): a duplicate is acked untried, a refusal deferred. */
  private async guardedAttempt(guarded: GuardedCall, run: Running<O>, span: AttemptSpan, traced: boolean): Promise<Verdict | undefined> {
    const slot: SlotHold = { held: false };
    let outcome: IdempotencyOutcome;
    try {
      outcome = await guarded.run(run.message, span, traced, slot);
    } catch (thrown) {
      return this.caught(run, span, thrown, slot);
    }
    if (!this.running.remove(run)) return undefined;
    guarded.answered();
    if (outcome === 'duplicate') return recorded(span, false, DUPLICATE);
    return this.acked(span, traced, outcome === 'no-key');
  }

  /** The call succeeded: acked, unless the hard stop cut it off first (undefined: `cutOffRunning` gave its verdict). */
  private done(run: Running<O>, span: AttemptSpan, traced: boolean): Verdict | undefined {
    return this.running.remove(run) ? this.acked(span, traced, false) : undefined;
  }

  private acked(span: AttemptSpan, traced: boolean, unkeyed: boolean): Verdict {
    this.breaker = recordOutcome(this.breaker, 'success');
    const verdict = unkeyed ? ACK_UNKEYED : ACK;
    if (traced) span.verdict(verdict, true);
    return verdict;
  }

  /** The call threw: its verdict, unless the hard stop cut it off first. */
  private caught(run: Running<O>, span: AttemptSpan, thrown: unknown, slot: SlotHold | undefined): Verdict | undefined {
    const verdict = this.running.remove(run) ? this.threw(run.delivery, run.origin, run.message, span, thrown) : undefined;
    // A failed call keeps its handler slot until its outcome counts (the breaker, a pause): freed
    // sooner, the next handler would start before an open breaker or a pause could stop it.
    if (slot !== undefined) this.guarded?.free(slot);
    return verdict;
  }

  /** The verdict of an attempt whose call threw: not started, refused by the guard, cut off, or failed. */
  private threw(delivery: Delivery, origin: O, message: BoomerangMessage, span: AttemptSpan, thrown: unknown): Verdict {
    const { log } = this.options;
    const { retryNo } = message;
    // Claimed, then the invocation stopped before a handler slot was free: the guard released the key.
    if (isNamedError(thrown, 'HandlerNotStartedError')) return recorded(span, false, this.untriedVerdict(delivery, this.stop === undefined));
    const refusal = this.guarded === undefined ? undefined : guardRefusalOf(thrown);
    if (refusal !== undefined) {
      // Not an attempt, never parked, no breaker outcome.
      this.guarded?.refused(delivery, origin, retryNo, refusal, thrown);
      return recorded(span, false, this.verdicts.deferred(delivery, errorFacts(thrown)));
    }
    span.handlerError(thrown);
    // Cut off by the budget: an attempt all the same, or a message that always outlasts the budget
    // would come back first in every invocation and stall the queue behind it.
    if (this.abort.signal.aborted) return recorded(span, true, this.verdicts.failed(delivery, message, cutOff('aborted by the budget', thrown), thrown));
    const error = errorFacts(thrown);
    const decision = this.verdicts.decide(delivery, message, thrown);
    const wasOpen = this.breaker.state === 'open';
    // A partner's "slow down" (the decision pauses the queue) says it is up: the pause answers it, not the breaker.
    this.breaker = recordOutcome(this.breaker, error.retryable && decision.pauseMs === undefined ? 'retryable-failure' : 'other-failure');
    if (!wasOpen && this.breaker.state === 'open') {
      this.stopping.abort();
      log.warn('circuit breaker opened: no more handler calls in this invocation; untried messages go back with their retry count', {
        failuresInARow: this.breaker.failuresInARow,
        errorName: error.name,
      });
    }
    return recorded(span, true, this.verdicts.of(delivery, message, decision, error, thrown));
  }

  /**
   * The verdict of a delivery that never reaches a handler: deferred to the delay path with the
   * count it came with (the breaker opened, the store is down), or given back as it is when there is
   * no delay path, no copy can carry it, or (`outOfTime`) the invocation has no time left for it.
   * Its span says the handler did not run, and why it waits.
   */
  public untried(delivery: Delivery, origin: O, outOfTime = false): Verdict {
    const verdict = this.untriedVerdict(delivery, outOfTime);
    if (this.spans.on)
      this.spans.start(delivery, origin.queue, readRetryNo(delivery.properties.headers, this.options.config.retryHeader).retryNo).verdict(verdict, false);
    return verdict;
  }

  /**
   * The verdict of a delivery that arrived after the take loop stopped: given back as it is, unless a
   * give-back counts (before 4.3) and would bring it to the crash-loop limit (`givenBackReachesLimit`):
   * then it is deferred for the shortest delay, its count kept out of it, as a message out of time is.
   */
  public lateArrival(delivery: Delivery, origin: O): Verdict {
    const { settings, config } = this.options;
    if (!settings.giveBackCounts || !givenBackReachesLimit(delivery.properties.headers, config.crashLoopLimit)) return OUT_OF_TIME_GIVE_BACK;
    return this.untried(delivery, origin, true);
  }

  private untriedVerdict(delivery: Delivery, outOfTime: boolean): Verdict {
    return this.verdicts.untried(delivery, this.stop, outOfTime);
  }

  /**
   * The verdicts of the handlers still running at the hard stop (they ignored their signal): each
   * made an attempt. Each comes with the origin it was attempted with (an event record), so a mode
   * need not keep its own map of what is running. Their late outcomes resolve `attempt` with `undefined`.
   */
  public cutOffRunning(): Array<[Delivery, Verdict, O]> {
    const verdicts: Array<[Delivery, Verdict, O]> = [];
    for (const { delivery, message, origin } of this.running.drain()) {
      verdicts.push([
        delivery,
        recorded(this.spans.of(delivery), true, this.verdicts.failed(delivery, message, cutOff('still running at the hard stop', undefined), undefined)),
        origin,
      ]);
    }
    return verdicts;
  }

  /** Clears the budget's timer and aborts the signal of any handler still running; says so once if a handler's answer paused the queue. */
  public end(): void {
    clearTimeout(this.abortTimer);
    this.deadlines.end();
    this.abort.abort(new Error('invocation over'));
    this.pause.report();
  }
}

export { Lifecycle };
export type { LifecycleOptions };
