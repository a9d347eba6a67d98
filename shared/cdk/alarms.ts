import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IMetric, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { FilterPattern, type ILogGroup, MetricFilter } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { METRICS_NAMESPACE } from '../observability/metrics.js';

/** One deployed function, as its alarms see it. */
type WatchedFunction = {
  /** Construct id prefix: `Pull`, `Event`. */
  readonly id: string;
  /** The function's name as written in the template (also the `service` dimension of its metrics). */
  readonly name: string;
  readonly fn: LambdaFunction;
  readonly logGroup: ILogGroup;
  /** What a failed invocation means for the messages, for the alarm's description. */
  readonly whenItFails: string;
};

/**
 * The phrase Lambda writes to the function's log group when it ends an invocation at its timeout
 * ("<time> <request id> Task timed out after 60.06 seconds", in the default Text log format). A Duration
 * alarm would not do: the pull function works until its budget is nearly spent, so a busy tick ends
 * close to the timeout without timing out.
 */
const TIMED_OUT = 'Task timed out';

/**
 * Three alarms per function, each on one invocation in 5 minutes: it parked a message (its EMF metric
 * `parked`), it failed (Lambda's `Errors`, which counts timeouts too), and it timed out (a metric filter
 * on {@link TIMED_OUT}: the cause `Errors` does not tell).
 * @example const alarms = functionAlarms(stack, { id: 'OrdersPull', name: 'Boomerang-orders-pull', fn, logGroup, whenItFails: '...' });
 */
function functionAlarms(scope: Construct, watched: WatchedFunction): Alarm[] {
  const { id, name, fn, logGroup } = watched;
  const timeouts = new MetricFilter(scope, `${id}TimeoutFilter`, {
    logGroup,
    filterPattern: FilterPattern.literal(`"${TIMED_OUT}"`),
    // A plain-text filter cannot set a dimension: the function goes into the metric name.
    metricNamespace: METRICS_NAMESPACE,
    metricName: `timeouts-${name}`,
    metricValue: '1',
  });
  return [
    alarm(
      scope,
      `${id}ParkedAlarm`,
      `${name} parked messages: they wait in the parking lot for a human (boomerang parked).`,
      new Metric({ namespace: METRICS_NAMESPACE, metricName: 'parked', dimensionsMap: { service: name }, statistic: 'Sum', period: Duration.minutes(5) }),
    ),
    alarm(
      scope,
      `${id}FailingAlarm`,
      `${name} failed (threw or timed out): ${watched.whenItFails} See its logs.`,
      fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
    ),
    alarm(
      scope,
      `${id}TimeoutAlarm`,
      `${name} timed out: Lambda ended an invocation mid-work. ${watched.whenItFails} Raise its timeout, or look for what hung in its logs.`,
      timeouts.metric({ statistic: 'Sum', period: Duration.minutes(5) }),
    ),
  ];
}

/** An alarm on one period of `metric`: at or above `threshold` (above, with `above`); no datapoint is not breaching. */
function alarm(scope: Construct, id: string, description: string, metric: IMetric, threshold = 1, above = false): Alarm {
  return new Alarm(scope, id, {
    alarmDescription: description,
    metric,
    threshold,
    evaluationPeriods: 1,
    comparisonOperator: above ? ComparisonOperator.GREATER_THAN_THRESHOLD : ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}

export { alarm, functionAlarms };
export type { WatchedFunction };
