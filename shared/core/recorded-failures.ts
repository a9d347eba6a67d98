/**
 * The failures Boomerang records on a copy (its `boomerang-error-name` and `boomerang-error-message`
 * headers) when no error a handler threw stands for them. They are named facts (`ErrorFacts` records),
 * not classes: nothing throws them and no caller can catch them, they only travel on a copy and in the
 * log, and a `RETRY_RULES` entry can match their name like any other. Each name is written here once.
 */
import type { ErrorFacts } from '../retry/decide-retry.js';

/** Every name a recorded failure can have (the `boomerang-error-name` of its copy). */
const RECORDED_FAILURE = {
  /** Parked without a handler call: delivered so often unsettled that its handler likely crashes the process. */
  crashLoop: 'CrashLoopError',
  /** The invocation's budget cut the handler off: an attempt all the same (retryable). */
  cutOff: 'HandlerCutOffError',
  /** Deferred untried: the circuit breaker opened in this invocation. */
  breakerOpen: 'CircuitBreakerOpen',
  /** Deferred untried: the queue is paused (a partner said "slow down"), for the pause's remaining time. */
  queuePaused: 'QueuePaused',
  /** Deferred untried: the invocation ran out of time before its turn. */
  outOfTime: 'OutOfTime',
  /** Deferred untried: the idempotency store failed for several messages in a row (the name of the thrown store error). */
  storeDown: 'IdempotencyStoreError',
  /** Parked without a handler call: an event record whose body could not be decoded. */
  undecodable: 'EventDecodeError',
} as const;

/** What a message not yet settled "failed" with when the breaker opened before it was tried. */
const NOT_TRIED: ErrorFacts = {
  name: RECORDED_FAILURE.breakerOpen,
  message: 'not tried: the circuit breaker opened in this invocation',
  retryable: true,
  retryAfterMs: undefined,
};

/** What a message the invocation had no time for "failed" with, should its deferred copy ever be parked. */
const OUT_OF_TIME: ErrorFacts = {
  name: RECORDED_FAILURE.outOfTime,
  message: 'not tried: the invocation ran out of time before its turn',
  retryable: true,
  retryAfterMs: undefined,
};

/** What a message deferred untried after the store failed in a row "failed" with (its copy's record, should it ever be parked). */
const STORE_DOWN: ErrorFacts = {
  name: RECORDED_FAILURE.storeDown,
  message: 'not tried: the idempotency store failed for several messages in a row in this invocation',
  retryable: true,
  retryAfterMs: undefined,
};

/**
 * What a message deferred untried while its queue is paused "failed" with (its copy's record, should it ever be parked).
 * @example queuePaused(Date.parse('2026-05-01T12:00:00Z')) // { name: 'QueuePaused', message: 'not tried: the queue is paused until 2026-05-01T12:00:00.000Z (the partner asked to slow down)', ... }
 */
function queuePaused(untilMs: number): ErrorFacts {
  return {
    name: RECORDED_FAILURE.queuePaused,
    message: `not tried: the queue is paused until ${new Date(untilMs).toISOString()} (the partner asked to slow down)`,
    retryable: true,
    retryAfterMs: undefined,
  };
}

/**
 * What an attempt the budget cut off failed with: `what` happened, then the handler's own error, if it
 * threw one. Retryable: the attempt counts, so a message that always outlasts the budget cannot stall its queue.
 * @example cutOff('still running at the hard stop', undefined) // { name: 'HandlerCutOffError', message: 'still running at the hard stop', ... }
 */
function cutOff(what: string, thrown: unknown): ErrorFacts {
  const detail = thrown instanceof Error ? `: ${thrown.name}: ${thrown.message}` : '';
  return { name: RECORDED_FAILURE.cutOff, message: `${what}${detail}`, retryable: true, retryAfterMs: undefined };
}

export { cutOff, NOT_TRIED, OUT_OF_TIME, queuePaused, RECORDED_FAILURE, STORE_DOWN };
