import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Summary } from './summary.js';
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
 * sends to CloudWatch Logs): the same names, units and dimensions as the EMF oracle in test/helpers/emf-metrics.ts, so the
 * alarms read either. One document with the invocation's counts and retry delays (dimension
 * `service`), then one per handler error name and one for the invocation's own error (dimensions
 * `service` and `errorName`).
 * @example
 * const metrics = new PowertoolsMetrics({ service: 'orders-retry' });
 * metrics.retryDelay(2000);
 * metrics.flush(summary);
 */
class PowertoolsMetrics extends MetricsRecorder {
  public constructor(private readonly options: PowertoolsMetricsOptions) {
    super();
  }

  /**
   * Loads Powertools Metrics here, at the end of the invocation, not with the bundle: the recorder
   * holds the figures until then, and loading and making a Metrics cost about 1.5 ms of a cold start,
   * which would otherwise come before the first message.
   */
  public async flush(summary: Summary, failedWith?: string): Promise<void> {
    const { Metrics } = await import('@aws-lambda-powertools/metrics');
    const metrics = new Metrics({
      namespace: this.options.namespace ?? process.env.POWERTOOLS_METRICS_NAMESPACE ?? METRICS_NAMESPACE,
      serviceName: this.options.service,
    });
    for (const [name, value] of Object.entries(invocationCounts(summary, this.errorsByName, failedWith))) metrics.addMetric(name, unitOf(name), value);
    // Powertools publishes a document by itself once a metric holds 100 values (EMF's limit).
    for (const delayMs of this.retryDelaysMs) metrics.addMetric('retryDelayMs', 'Milliseconds', delayMs);
    metrics.publishStoredMetrics();
    for (const [errorName, count] of this.errorsByName) byErrorName(metrics, 'handlerErrors', errorName, count);
    if (failedWith !== undefined) byErrorName(metrics, 'invocationErrors', dimensionValue(failedWith), 1);
  }
}

function byErrorName(metrics: Metrics, metric: string, errorName: string, count: number): void {
  const single = metrics.singleMetric();
  single.addDimension('errorName', errorName);
  single.addMetric(metric, 'Count', count);
}

export { PowertoolsMetrics };
