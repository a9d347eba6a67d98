/**
 * A test oracle: the CloudWatch Embedded Metric Format documents that Boomerang's metrics amount to,
 * written out by hand. The deployed functions write their metrics with Powertools
 * (shared/observability/powertools-metrics.ts); the tests compare it with this, and read the metrics of
 * an invocation from these lines.
 */
import { dimensionValue, invocationCounts, METRICS_NAMESPACE, MetricsRecorder, unitOf } from '../../shared/observability/metrics.js';
import type { Summary } from '../../shared/observability/summary.js';

/** EMF takes at most 100 values per metric and document. */
const MAX_VALUES_PER_DOCUMENT = 100;

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
  const failed =
    input.failedWith === undefined ? [] : [document(input, ['service', 'errorName'], { invocationErrors: 1 }, { errorName: dimensionValue(input.failedWith) })];
  return [main, ...moreDelays, ...byName, ...failed];
}

function delayValues(values: readonly number[] | undefined): Record<string, readonly number[]> {
  return values === undefined ? {} : { retryDelayMs: values };
}

function document(input: EmfInput, dimensions: string[], metrics: Record<string, number | readonly number[]>, extra: Record<string, string> = {}): EmfDocument {
  const names = Object.keys(metrics);
  return {
    _aws: {
      Timestamp: input.timestampMs,
      CloudWatchMetrics: [
        {
          Namespace: METRICS_NAMESPACE,
          Dimensions: [dimensions],
          Metrics: names.map((Name) => ({ Name, Unit: unitOf(Name) })),
        },
      ],
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

export { EmfMetrics, emfDocuments };
export type { EmfDocument };
