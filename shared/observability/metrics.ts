import { SUMMARY_COUNTS, type Summary } from '../core/summary.js';

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
/** EMF takes at most 100 values per metric and document. */
const MAX_VALUES_PER_DOCUMENT = 100;
/** Error names beyond this many per invocation are counted under {@link OTHER_ERRORS}: dimensions cost money. */
const MAX_ERROR_NAMES = 20;
const OTHER_ERRORS = 'Other';

/** Everything one invocation's EMF documents are made of. */
type EmfInput = {
  readonly service: string;
  readonly timestampMs: number;
  readonly summary: Summary;
  readonly errorsByName: ReadonlyMap<string, number>;
  readonly retryDelaysMs: readonly number[];
  /** The name of the error the invocation threw; undefined when it succeeded. */
  readonly failedWith?: string;
};

/** One EMF JSON object (one log line). */
type EmfDocument = Record<string, unknown>;

/**
 * The CloudWatch Embedded Metric Format documents for one invocation (pure). The first holds the
 * counts, `handlerErrors` (all names), `durationMs`, `breakerOpened` (0 or 1) and up to 100
 * `retryDelayMs` values, with the dimension `service`; more delays follow in further documents.
 * Then one document per error name, `handlerErrors` with the dimensions `service` and `errorName`.
 * `invocationErrors` is 1 when the invocation threw (then also counted by `errorName`), else 0.
 */
function emfDocuments(input: EmfInput): EmfDocument[] {
  const { summary } = input;
  const delayChunks = chunk(input.retryDelaysMs, MAX_VALUES_PER_DOCUMENT);
  const main = document(input, ['service'], { ...invocationCounts(summary, input.errorsByName, input.failedWith), ...delayValues(delayChunks[0]) });
  const moreDelays = delayChunks.slice(1).map((values) => document(input, ['service'], delayValues(values)));
  const byName = [...input.errorsByName].map(([errorName, count]) => document(input, ['service', 'errorName'], { handlerErrors: count }, { errorName }));
  const failed = input.failedWith === undefined ? [] : [document(input, ['service', 'errorName'], { invocationErrors: 1 }, { errorName: dimensionValue(input.failedWith) })];
  return [main, ...moreDelays, ...byName, ...failed];
}

/**
 * The single values of the main document: the summary's counts (`skippedDuplicates` among them),
 * `withoutIdempotencyKey`, `handlerErrors` (all names),
 * `invocationErrors` (1 when the invocation threw), `breakerOpened` (0 or 1), `durationMs`, and
 * `parkedDepth` (the parking lot's depth at the end) when it was read.
 */
function invocationCounts(summary: Summary, errorsByName: ReadonlyMap<string, number>, failedWith: string | undefined): Record<string, number> {
  const handlerErrors = [...errorsByName.values()].reduce((sum, n) => sum + n, 0);
  const counts: Record<string, number> = { handlerErrors, invocationErrors: failedWith === undefined ? 0 : 1, breakerOpened: summary.breakerOpened ? 1 : 0 };
  for (const key of SUMMARY_COUNTS) counts[key] = summary[key];
  counts.withoutIdempotencyKey = summary.withoutIdempotencyKey;
  counts.durationMs = summary.durationMs;
  // A gauge, not a count: written only when it was read, so a failed invocation never reports 0.
  if (summary.parkedDepth !== undefined) counts.parkedDepth = summary.parkedDepth;
  return counts;
}

/** CloudWatch's unit of a metric: its name says it (`...Ms` are milliseconds, the rest counts). */
function unitOf(name: string): 'Milliseconds' | 'Count' {
  return name.endsWith('Ms') ? 'Milliseconds' : 'Count';
}

function delayValues(values: readonly number[] | undefined): Record<string, readonly number[]> {
  return values === undefined ? {} : { retryDelayMs: values };
}

function document(input: EmfInput, dimensions: string[], metrics: Record<string, number | readonly number[]>, extra: Record<string, string> = {}): EmfDocument {
  const names = Object.keys(metrics);
  return {
    _aws: {
      Timestamp: input.timestampMs,
      CloudWatchMetrics: [{
        Namespace: METRICS_NAMESPACE,
        Dimensions: [dimensions],
        Metrics: names.map((Name) => ({ Name, Unit: unitOf(Name) })),
      }],
    },
    service: input.service,
    ...extra,
    ...metrics,
  };
}

function chunk<T>(values: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size));
  return out;
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
  const clean = name.replace(/[^\x20-\x7e]/g, '_').trim().slice(0, 64);
  return clean === '' ? 'Error' : clean;
}

/** Options of {@link EmfMetrics}. */
type EmfMetricsOptions = {
  /** The `service` dimension: the function's name. */
  readonly service: string;
  /** Where each EMF document goes, as one line. @default process.stdout */
  readonly write?: (line: string) => void;
  /** @default Date.now */
  readonly now?: () => number;
};

/**
 * Writes one invocation's metrics as CloudWatch EMF lines (Lambda sends stdout to CloudWatch Logs,
 * which extracts the metrics), namespace `Boomerang`, dimension `service`.
 * @example
 * const metrics = new EmfMetrics({ service: 'orders-retry' });
 * metrics.retryDelay(2000);
 * metrics.flush(summary);
 */
class EmfMetrics extends MetricsRecorder {
  public constructor(private readonly options: EmfMetricsOptions) {
    super();
  }

  public flush(summary: Summary, failedWith?: string): void {
    const write = this.options.write ?? ((line: string) => void process.stdout.write(`${line}\n`));
    const timestampMs = (this.options.now ?? Date.now)();
    const input = { service: this.options.service, timestampMs, summary, errorsByName: this.errorsByName, retryDelaysMs: this.retryDelaysMs, failedWith };
    for (const doc of emfDocuments(input)) write(JSON.stringify(doc));
  }
}

/** Metrics that go nowhere (tests, local runs). */
const noMetrics: InvocationMetrics = Object.freeze({ handlerError: () => undefined, retryDelay: () => undefined, flush: () => undefined });

export { dimensionValue, EmfMetrics, emfDocuments, invocationCounts, MAX_ERROR_NAMES, METRICS_NAMESPACE, MetricsRecorder, noMetrics, unitOf };
export type { EmfDocument, EmfInput, EmfMetricsOptions, InvocationMetrics };
