import { errorFacts, type ErrorFacts, type RetryDecision } from './decide-retry.js';
import { CrashLoopError } from './errors.js';
import { BrokerHeader, readBrokerCount } from './headers.js';

/**
 * The crash-loop guard, as a pure decision. A handler that crashes its process (out of memory, a
 * Lambda timeout, SIGKILL) never settles its delivery: the broker hands it out again, and no retry
 * count of Boomerang's ever moves. A quorum queue counts those returns in `x-delivery-count`, and on
 * 4.x drops the message (no dead-letter target) past its delivery limit, 20 by default. The guard
 * parks the message instead of calling the handler once the count reaches `CRASH_LOOP_LIMIT`.
 *
 * The decision reads `x-delivery-count` rather than 4.3's `x-acquired-count`: it is the count the
 * broker's limit is checked against on every version, and on 4.3 it leaves out Boomerang's own
 * requeueing nacks (untried deliveries given back), which `x-acquired-count` includes. The reason
 * says how often the message was really handed out: `x-acquired-count` + 1 where the broker sets it.
 *
 * | `x-delivery-count` | `x-acquired-count` | limit | verdict                                  |
 * |--------------------|--------------------|-------|------------------------------------------|
 * | absent             | any                | 10    | handle                                   |
 * | 9                  | absent             | 10    | handle                                   |
 * | 10                 | absent             | 10    | park: `crash loop: delivered 11 times`   |
 * | 10                 | 14                 | 10    | park: `crash loop: delivered 15 times`   |
 * | 50                 | any                | 0     | handle (guard disabled)                  |
 */
type CrashLoopVerdict =
  | { readonly kind: 'handle' }
  | { readonly kind: 'park'; /** Times the message was handed out, this delivery included. */ readonly deliveries: number; readonly reason: string };

const HANDLE: CrashLoopVerdict = Object.freeze({ kind: 'handle' });

/**
 * Whether the delivery may go to the handler, given its broker headers and `CRASH_LOOP_LIMIT`
 * (0 disables the guard). A missing or malformed count never parks.
 * @example checkCrashLoop({ 'x-delivery-count': 10 }, 10) // { kind: 'park', deliveries: 11, reason: 'crash loop: delivered 11 times' }
 */
function checkCrashLoop(headers: Readonly<Record<string, unknown>> | undefined, limit: number): CrashLoopVerdict {
  if (limit <= 0 || headers === undefined) return HANDLE;
  const returned = readBrokerCount(headers, BrokerHeader.deliveryCount);
  if (returned === undefined || returned < limit) return HANDLE;
  const acquired = readBrokerCount(headers, BrokerHeader.acquiredCount);
  const deliveries = Math.max(returned, acquired ?? 0) + 1;
  return { kind: 'park', deliveries, reason: `crash loop: delivered ${deliveries} times` };
}

/** The error facts and decision a crash-loop park is carried out with (pull and event mode alike). */
function crashLoopFailure(verdict: Extract<CrashLoopVerdict, { kind: 'park' }>, limit: number): { readonly error: ErrorFacts; readonly decision: RetryDecision } {
  const message = `the broker handed the message out ${verdict.deliveries} times without it being settled (CRASH_LOOP_LIMIT=${limit}); its handler was not called again`;
  return {
    error: errorFacts(new CrashLoopError(message)),
    decision: { kind: 'park', reason: verdict.reason },
  };
}

export { checkCrashLoop, crashLoopFailure };
export type { CrashLoopVerdict };
