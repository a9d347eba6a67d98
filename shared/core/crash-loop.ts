import type { ErrorFacts } from '../retry/decide-retry.js';
import { RECORDED_FAILURE } from './recorded-failures.js';
import { BrokerHeader, LAST_DELIVERY_COUNT, readBrokerCount } from '../message/headers.js';

/**
 * The crash-loop guard, as a pure decision. A handler that crashes its process (out of memory, a
 * Lambda timeout, SIGKILL) never settles its delivery: the broker hands it out again, and no retry
 * count of Boomerang's ever moves. A quorum queue counts those returns in `x-delivery-count`, and on
 * 4.x drops the message (no dead-letter target) past its delivery limit, 20 by default. The guard
 * parks the message instead of calling the handler once the count reaches `CRASH_LOOP_LIMIT`.
 *
 * A crash returns every delivery the invocation held, so the good messages of the same prefetch
 * window reach the limit together with the culprit (measured: all 20 good messages behind a SIGKILLing
 * one were parked when every delivery at the limit was). A crash puts them back at the head, in order
 * (measured on 3.10.8 and 4.3.6), and an invocation starts with one handler at a time (the breaker is
 * half-open), so the culprit is the first delivery at the limit: only that one is parked per
 * invocation, and the others are handled.
 * A delivery at `LAST_DELIVERY_COUNT` is parked whatever came before: returned once more, 4.x drops it.
 *
 * The decision reads `x-delivery-count` rather than 4.3's `x-acquired-count`: it is the count the
 * broker's limit is checked against on every version, and on 4.3 it leaves out Boomerang's own
 * requeueing nacks (untried deliveries given back), which `x-acquired-count` includes. The reason
 * says how often the message was really handed out: `x-acquired-count` + 1 where the broker sets it.
 *
 * | `x-delivery-count` | `x-acquired-count` | limit | parked before in this invocation | verdict                                |
 * |--------------------|--------------------|-------|----------------------------------|----------------------------------------|
 * | absent             | any                | 10    | 0                                | handle                                 |
 * | 9                  | absent             | 10    | 0                                | handle                                 |
 * | 10                 | absent             | 10    | 0                                | park: `crash loop: delivered 11 times` |
 * | 10                 | 14                 | 10    | 0                                | park: `crash loop: delivered 15 times` |
 * | 10                 | absent             | 10    | 1                                | handle                                 |
 * | 20                 | absent             | 10    | 1                                | park: `crash loop: delivered 21 times` |
 * | 50                 | any                | 0     | 0                                | handle (guard disabled)                |
 *
 * `ownReturns` (native mode) is how many of `x-delivery-count`'s returns were Boomerang's own failed
 * settlements (retries and deferrals, counted in an annotation): the crashes are the rest.
 *
 * | `x-delivery-count` | own returns | limit | verdict                              |
 * |--------------------|-------------|-------|--------------------------------------|
 * | 15                 | 6           | 10    | handle (9 crashes)                   |
 * | 16                 | 6           | 10    | park: `crash loop: delivered 17 times` (10 crashes) |
 *
 * `acquired` (event mode) counts `x-acquired-count` as well: the larger of the two counts is the
 * returns. In event mode Boomerang never gives a delivery back (a give-back is a fresh copy), the
 * event source mapping does, after a failed invocation, and on 4.3 a requeueing `basic.nack` raises
 * only `x-acquired-count`: without it a mapping that nacks would loop a crashing message for ever.
 * A delivery at `LAST_DELIVERY_COUNT` by that count is parked whatever came before, too: when good
 * messages come before the culprit in a batch that crashes (the mapping gives the whole batch back),
 * the first of them is parked instead of it at the limit, and this bounds the culprit's loop.
 *
 * | `x-delivery-count` | `x-acquired-count` | `acquired` | limit | verdict                                |
 * |--------------------|--------------------|------------|-------|----------------------------------------|
 * | absent             | 10                 | false      | 10    | handle                                 |
 * | absent             | 9                  | true       | 10    | handle                                 |
 * | absent             | 10                 | true       | 10    | park: `crash loop: delivered 11 times` |
 * | 3                  | 12                 | true       | 10    | park: `crash loop: delivered 13 times` |
 * | absent             | 19                 | true       | 10    | handle when a park came before         |
 * | absent             | 20                 | true       | 10    | park, also when a park came before: `crash loop: delivered 21 times` |
 */
type CrashLoopVerdict =
  | { readonly kind: 'handle' }
  | { readonly kind: 'park' /** Times the message was handed out, this delivery included. */; readonly deliveries: number; readonly reason: string };

/** What the guard counts besides `x-delivery-count`: see the tables above. */
type CrashCounting = {
  /** Returns in `x-delivery-count` that were the mode's own failed settlements (native). @default 0 */
  readonly ownReturns?: number;
  /** Count `x-acquired-count` (4.3+) too, the larger of the two (event mode). @default false */
  readonly acquired?: boolean;
};

const HANDLE: CrashLoopVerdict = { kind: 'handle' };

/**
 * Whether the delivery may go to the handler, given its broker headers, `CRASH_LOOP_LIMIT` (0 disables
 * the guard), how many crash-loop parks this invocation made already, and what else counts (`counting`).
 * A missing or malformed count never parks.
 * @example checkCrashLoop({ 'x-delivery-count': 10 }, 10, 0) // { kind: 'park', deliveries: 11, reason: 'crash loop: delivered 11 times' }
 */
function checkCrashLoop(
  headers: Readonly<Record<string, unknown>> | undefined,
  limit: number,
  parkedBefore: number,
  counting: CrashCounting = {},
): CrashLoopVerdict {
  if (limit <= 0 || headers === undefined) return HANDLE;
  const ownReturns = counting.ownReturns ?? 0;
  const counted = readBrokerCount(headers, BrokerHeader.deliveryCount);
  const acquired = readBrokerCount(headers, BrokerHeader.acquiredCount);
  // Native mode's retries are returns too (failed settlements): only the rest are crashes.
  const brokerReturns = counted === undefined ? undefined : counted - ownReturns;
  const returned = counting.acquired === true && acquired !== undefined ? Math.max(brokerReturns ?? 0, acquired) : brokerReturns;
  if (returned === undefined || returned < limit) return HANDLE;
  // At the last count (4.x's own limit; in event mode, 20 failed invocations by either count) it is parked whatever came before.
  if (parkedBefore > 0 && returned < LAST_DELIVERY_COUNT) return HANDLE;
  const deliveries = Math.max(counted ?? 0, acquired ?? 0) + 1;
  return { kind: 'park', deliveries, reason: `crash loop: delivered ${deliveries} times` };
}

/**
 * Whether one more give-back (a requeueing nack, which raises `x-delivery-count` before 4.3) would bring
 * the delivery to where the guard parks it (`CRASH_LOOP_LIMIT`), or to where 4.x drops it
 * (`LAST_DELIVERY_COUNT`). Such a delivery, when it arrives after the take loop stopped, is deferred
 * instead: a message given back untried in several invocations in a row (each stopping before it
 * arrived) would otherwise be parked as a crash loop although no handler ever saw it.
 *
 * | `x-delivery-count` | limit | verdict |
 * |--------------------|-------|---------|
 * | absent             | 2     | false   |
 * | 0                  | 2     | false   |
 * | 1                  | 2     | true    |
 * | 9                  | 10    | true    |
 * | 8                  | 10    | false   |
 * | 18                 | 0     | false   |
 * | 19                 | 0     | true (4.x drops it at the next return) |
 * @example givenBackReachesLimit({ 'x-delivery-count': 1 }, 2) // true
 */
function givenBackReachesLimit(headers: Readonly<Record<string, unknown>> | undefined, limit: number): boolean {
  const counted = readBrokerCount(headers, BrokerHeader.deliveryCount) ?? 0;
  const bound = limit > 0 ? Math.min(limit, LAST_DELIVERY_COUNT) : LAST_DELIVERY_COUNT;
  return counted + 1 >= bound;
}

/** The error a crash-loop park records. */
function crashLoopError(verdict: Extract<CrashLoopVerdict, { kind: 'park' }>, limit: number): ErrorFacts {
  return {
    name: RECORDED_FAILURE.crashLoop,
    message: `handed out ${verdict.deliveries} times unsettled (CRASH_LOOP_LIMIT=${limit}); handler not called`,
    retryable: false,
    retryAfterMs: undefined,
  };
}

export { checkCrashLoop, crashLoopError, givenBackReachesLimit };
