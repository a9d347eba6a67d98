import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Summary } from '../engine/summary.js';
import { dimensionValue, invocationCounts, METRICS_NAMESPACE, MetricsRecorder, unitOf } from './metrics.js';

/** Options of {@link PowertoolsMetrics}. */
type PowertoolsMetricsOptions = {
  /** The `service` dimension the alarms watch: the function's name. */
  readonly service: string;
  /** The CloudWatch namespace. @default POWERTOOLS_METRICS_NAMESPACE, else `Boomerang` */
  readonly namespace?: string;
};

/**
 * One invocation's metrics through Powertools for AWS Lambda's Metrics (EMF on stdout, which Lambda
 * sends to CloudWatch Logs): the same names, units and dimensions as {@link EmfMetrics}, so the
 * alarms read either. One document with the invocation's counts and retry delays (dimension
 * `service`), then one per handler error name and one for the invocation's own error (dimensions
 * `service` and `errorName`).
 * @example
 * const metrics = new PowertoolsMetrics({ service: 'orders-retry' });
 * metrics.retryDelay(2000);
 * metrics.flush(summary);
 */
class PowertoolsMetrics extends MetricsRecorder {
  // Made at the flush, not with the invocation: the recorder holds the figures until then, and a
  // Powertools Metrics costs about 1 ms to make on a cold start, which would delay the first message.
  private metricsOrNone: Metrics | undefined;

  public constructor(private readonly options: PowertoolsMetricsOptions) {
    super();
  }

  private get metrics(): Metrics {
    this.metricsOrNone ??= new Metrics({ namespace: this.options.namespace ?? process.env.POWERTOOLS_METRICS_NAMESPACE ?? METRICS_NAMESPACE, serviceName: this.options.service });
    return this.metricsOrNone;
  }

  public flush(summary: Summary, failedWith?: string): void {
    for (const [name, value] of Object.entries(invocationCounts(summary, this.errorsByName, failedWith))) this.metrics.addMetric(name, unitOf(name), value);
    // Powertools publishes a document by itself once a metric holds 100 values (EMF's limit).
    for (const delayMs of this.retryDelaysMs) this.metrics.addMetric('retryDelayMs', 'Milliseconds', delayMs);
    this.metrics.publishStoredMetrics();
    for (const [errorName, count] of this.errorsByName) this.byErrorName('handlerErrors', errorName, count);
    if (failedWith !== undefined) this.byErrorName('invocationErrors', dimensionValue(failedWith), 1);
  }

  private byErrorName(metric: string, errorName: string, count: number): void {
    const single = this.metrics.singleMetric();
    single.addDimension('errorName', errorName);
    single.addMetric(metric, 'Count', count);
  }
}

export { PowertoolsMetrics };
export type { PowertoolsMetricsOptions };
