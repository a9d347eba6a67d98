import { Duration } from 'aws-cdk-lib';
import { type Alarm, type IMetric, MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import { METRICS_NAMESPACE } from '../observability/metrics.js';
import { alarm } from './alarms.js';
import type { DeployedQueue } from './deployed-queue.js';

/** The shortest period: the metric's one datapoint per invocation, at most a minute apart for a busy queue. */
const MIN_PERIOD_MINUTES = 5;

/**
 * The alarm on how full a queue's parking lot is (Amazon MQ publishes no per-queue metrics): the
 * Maximum of `parkedDepth`, which each of the queue's functions writes after it settled (dimension
 * `service` = its name), above `deploy.parkedDepthAlarm`. With both modes, the larger of the two
 * functions' readings. The period is 5 minutes, or the pull schedule's interval when that is longer,
 * so that a pull-only queue has a reading in every period; a period without one is not breaching.
 * Undefined when the queue turned it off (`parkedDepthAlarm: false`).
 * @example const depth = parkedDepthAlarm(stack, 'Orders', queue, ['Orders-orders-pull']);
 */
function parkedDepthAlarm(
  scope: Construct,
  idPrefix: string,
  queue: Pick<DeployedQueue, 'name' | 'file' | 'deploy'>,
  functionNames: readonly string[],
): Alarm | undefined {
  const threshold = queue.deploy.parkedDepthAlarm;
  if (threshold === undefined || functionNames.length === 0) return undefined;
  const minutes = queue.deploy.modes.includes('pull') ? Math.max(MIN_PERIOD_MINUTES, queue.deploy.pull.rateMinutes) : MIN_PERIOD_MINUTES;
  const period = Duration.minutes(minutes);
  const readings = functionNames.map(
    (name) => new Metric({ namespace: METRICS_NAMESPACE, metricName: 'parkedDepth', dimensionsMap: { service: name }, statistic: 'Maximum', period }),
  );
  const metric: IMetric =
    readings.length === 1
      ? (readings[0] as Metric)
      : new MathExpression({
          expression: `MAX([${readings.map((_, i) => `depth${i}`).join(', ')}])`,
          usingMetrics: Object.fromEntries(readings.map((m, i) => [`depth${i}`, m])),
          period,
          label: `parkedDepth of ${queue.name}`,
        });
  const over = threshold === 0 ? 'holds messages' : `holds more than ${threshold} messages`;
  return alarm(
    scope,
    `${idPrefix}ParkedDepthAlarm`,
    `The parking lot of ${queue.name} ${over} (parkedDepth, the most read in ${minutes} min): they wait for a human. See them with boomerang console, or boomerang parked groups --function ${queue.name}; replay or purge them (deploy.parkedDepthAlarm in ${queue.file} sets the threshold).`,
    metric,
    threshold,
    true,
  );
}

export { parkedDepthAlarm };
