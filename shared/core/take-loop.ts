/**
 * The take loop of one invocation: takes messages from the transport and hands each to an attempt, at
 * the concurrency the lifecycle allows, until a stop; where a give-back counts, it narrows the
 * transport's prefetch as the stop nears, so that what the invocation holds at its stop was tried.
 */
import type { Config } from '../config/config.js';
import type { StopReason } from '../observability/summary.js';
import type { Lifecycle } from './attempt.js';
import type { InFlight } from './in-flight.js';
import type { Tally } from './tally.js';
import type { Deadlines, Taken, Transport } from './transport.js';
import { OUT_OF_TIME_GIVE_BACK, type Verdict } from './verdict.js';

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

export { narrowingOf, takeUntilStop };
