/**
 * A retry policy as time (pure): for each attempt of a message that keeps failing, the delay its
 * policy asks, the delay the delay path really gives (a tier snaps it up, `exact` mode rounds it to
 * its unit, native mode gives it as asked), the path that holds it, when the attempt comes counted
 * from the first, and when a scheduled pull function really takes it: a retry that comes due between
 * two ticks waits for the next. `boomerang policy` prints it; the console draws it.
 */
import { baseDelayMs } from '../retry/backoff.js';
import type { RetryPolicy } from '../retry/retry-policy.js';
import { createDelayRouter } from './plan.js';
import type { TopologyOptions } from './types.js';

/** One attempt of a message that keeps failing. */
type TimelineAttempt = {
  /** 1 is the first delivery; the rest are retries. */
  readonly attempt: number;
  /** The delay the policy asks before it (its base delay, no jitter); 0 for the first. */
  readonly delayMs: number;
  /** The jitter's range around `delayMs`: [lowest, highest]. */
  readonly jitterMs: readonly [number, number];
  /** What the delay path gives (a tier, whole `exact` units, native: as asked). */
  readonly pathDelayMs: number;
  /** Where it waits: a tier queue, the `exact` levels, the work queue itself (native). */
  readonly via: string;
  /** When it comes due, from the first attempt (path delays, no jitter). */
  readonly atMs: number;
  /** With a pull schedule: when the first tick at or after it comes due takes it (undefined without one). */
  readonly pullAtMs: number | undefined;
};

type RetryTimeline = {
  readonly attempts: readonly TimelineAttempt[];
  /** When the last attempt's failure parks it (as `atMs`, and on a pull schedule). */
  readonly parkedAtMs: number;
  readonly parkedPullAtMs: number | undefined;
};

/**
 * The timeline of `policy` on the delay path `topology` describes; `pullEveryMs` is the pull
 * function's schedule (undefined: none, as in event mode, where a retry is delivered as it comes due).
 * Attempts are taken at once when due in event mode; in pull mode at the next tick (sooner only while
 * an invocation is still taking messages).
 * @example retryTimeline({ maxRetries: 1, initialDelayMs: 1000, multiplier: 2, maxDelayMs: 3_600_000, jitter: 0.1 }, topology, 60_000).attempts[1]?.pullAtMs // 60000
 */
function retryTimeline(policy: RetryPolicy, topology: TopologyOptions, pullEveryMs: number | undefined): RetryTimeline {
  const route = policy.maxRetries === 0 || topology.delayMode === 'native' ? undefined : createDelayRouter(topology);
  const attempts: TimelineAttempt[] = [
    { attempt: 1, delayMs: 0, jitterMs: [0, 0], pathDelayMs: 0, via: topology.workQueue, atMs: 0, pullAtMs: pullEveryMs === undefined ? undefined : 0 },
  ];
  for (let retryNo = 1; retryNo <= policy.maxRetries; retryNo++) {
    const previous = attempts[attempts.length - 1] as TimelineAttempt;
    const delayMs = baseDelayMs(retryNo, policy);
    const spread = delayMs * policy.jitter;
    const routed = route?.(delayMs);
    const pathDelayMs = routed?.delayMs ?? delayMs;
    attempts.push({
      attempt: retryNo + 1,
      delayMs,
      jitterMs: [Math.max(0, Math.round(delayMs - spread)), Math.round(Math.min(delayMs + spread, policy.maxDelayMs))],
      pathDelayMs,
      via: viaOf(topology, routed?.routingKey),
      atMs: previous.atMs + pathDelayMs,
      pullAtMs: previous.pullAtMs === undefined || pullEveryMs === undefined ? undefined : nextTick(previous.pullAtMs + pathDelayMs, pullEveryMs),
    });
  }
  const last = attempts[attempts.length - 1] as TimelineAttempt;
  return { attempts, parkedAtMs: last.atMs, parkedPullAtMs: last.pullAtMs };
}

/** Where a retry waits, in words: a tier queue by name, the shared `exact` levels, or the work queue itself (native). */
function viaOf(topology: TopologyOptions, routingKey: string | undefined): string {
  if (topology.delayMode === 'native') return `${topology.workQueue} (the broker's delay)`;
  if (topology.delayMode === 'exact') return `the ${topology.exactNamePrefix ?? 'boomerang.delay'} levels`;
  return routingKey ?? '-';
}

/** The first tick (a multiple of `everyMs`) at or after `atMs`. */
function nextTick(atMs: number, everyMs: number): number {
  return Math.ceil(atMs / everyMs) * everyMs;
}

/**
 * A duration as people say it: `900 ms`, `1.5 s`, `2 min`, `1 h 5 min`.
 * @example formatDuration(61_000) // '1 min 1 s'
 */
function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 59_950) return `${Number((ms / 1000).toFixed(1))} s`;
  const parts: string[] = [];
  const total = Math.round(ms / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  if (hours > 0) parts.push(`${hours} h`);
  if (minutes > 0) parts.push(`${minutes} min`);
  if (seconds > 0 && hours === 0) parts.push(`${seconds} s`);
  return parts.join(' ');
}

export { formatDuration, retryTimeline };
export type { RetryTimeline };
