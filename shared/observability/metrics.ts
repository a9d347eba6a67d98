import { SUMMARY_COUNTS, type Summary } from './summary.js';

/**
 * The metrics port the engine calls during one invocation. `flush` writes everything once, at the
 * end; an implementation is used for one invocation only.
 */
interface InvocationMetrics {
  /** A handler attempt threw an error with this name (budget cut-offs are not errors). */
  handlerError(errorName: string): void;
  /** A retry copy was confirmed: the delay it waits on the delay path, in milliseconds. */
  retryDelay(delayMs: number): void;
  /**
   * Writes the invocation's metrics: the summary's counts plus what was recorded; `failedWith` is the
   * name of the error the invocation threw, if it did. The wrapper awaits it before the invocation
   * returns (Lambda may freeze the process right after).
   */
  flush(summary: Summary, failedWith?: string): void | Promise<void>;
}

/** CloudWatch namespace of every Boomerang metric. */
const METRICS_NAMESPACE = 'Boomerang';
/** Error names beyond this many per invocation are counted under {@link OTHER_ERRORS}: dimensions cost money. */
const MAX_ERROR_NAMES = 20;
const OTHER_ERRORS = 'Other';

/**
 * The single values of the main document: the summary's counts (`skippedDuplicates` among them),
 * `withoutIdempotencyKey`, `handlerErrors` (all names),
 * `invocationErrors` (1 when the invocation threw), `breakerOpened` (0 or 1), `paused` (1 when the
 * queue was paused during the invocation), `durationMs`, `parkedDepth` (the parking lot's depth at
 * the end) when it was read, and `pacedMs` with a rate limit.
 */
function invocationCounts(summary: Summary, errorsByName: ReadonlyMap<string, number>, failedWith: string | undefined): Record<string, number> {
  const handlerErrors = [...errorsByName.values()].reduce((sum, n) => sum + n, 0);
  const counts: Record<string, number> = {
    handlerErrors,
    invocationErrors: failedWith === undefined ? 0 : 1,
    breakerOpened: summary.breakerOpened ? 1 : 0,
    paused: summary.pausedUntil === undefined ? 0 : 1,
  };
  for (const key of SUMMARY_COUNTS) counts[key] = summary[key];
  counts.withoutIdempotencyKey = summary.withoutIdempotencyKey;
  counts.durationMs = summary.durationMs;
  // A gauge, not a count: written only when it was read, so a failed invocation never reports 0.
  if (summary.parkedDepth !== undefined) counts.parkedDepth = summary.parkedDepth;
  // Only a queue with a rate limit has it: the others pay for no metric they cannot have.
  if (summary.pacedMs !== undefined) counts.pacedMs = summary.pacedMs;
  return counts;
}

/** CloudWatch's unit of a metric: its name says it (`...Ms` are milliseconds, the rest counts). */
function unitOf(name: string): 'Milliseconds' | 'Count' {
  return name.endsWith('Ms') ? 'Milliseconds' : 'Count';
}

/**
 * What every implementation records during an invocation: handler errors by name (at most
 * MAX_ERROR_NAMES names, the rest as `Other`: dimensions cost money) and each retry's delay.
 */
abstract class MetricsRecorder implements InvocationMetrics {
  protected readonly errorsByName = new Map<string, number>();
  protected readonly retryDelaysMs: number[] = [];

  public handlerError(errorName: string): void {
    let name = dimensionValue(errorName);
    if (!this.errorsByName.has(name) && this.errorsByName.size >= MAX_ERROR_NAMES) name = OTHER_ERRORS;
    this.errorsByName.set(name, (this.errorsByName.get(name) ?? 0) + 1);
  }

  public retryDelay(delayMs: number): void {
    this.retryDelaysMs.push(delayMs);
  }

  public abstract flush(summary: Summary, failedWith?: string): void | Promise<void>;
}

/** A dimension value CloudWatch accepts: printable ASCII, at most 64 characters, never empty. */
function dimensionValue(name: string): string {
  const clean = name
    .replace(/[^\x20-\x7e]/g, '_')
    .trim()
    .slice(0, 64);
  return clean === '' ? 'Error' : clean;
}

/** Metrics that go nowhere (tests, local runs). */
const noMetrics: InvocationMetrics = Object.freeze({ handlerError: () => undefined, retryDelay: () => undefined, flush: () => undefined });

export { dimensionValue, invocationCounts, MAX_ERROR_NAMES, METRICS_NAMESPACE, MetricsRecorder, noMetrics, unitOf };
export type { InvocationMetrics };
