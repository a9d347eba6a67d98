import { Duration } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget } from 'aws-cdk-lib/aws-events-targets';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import type { ResolvedRetention } from '../queues/deploy-options.js';
import { alarm } from './alarms.js';
import { boomerangFunction, type FunctionSpec } from './function.js';

/**
 * A queue's retention: its function (its own bundle, log group and role holding `spec.statements`:
 * the broker secret), the schedule that invokes it every `rateHours`, and an alarm on its errors.
 * Lambda's asynchronous retries stay on: a purge run again finds only what is still old enough.
 * @example const { fn, alarms } = retentionFunction(stack, { ...spec, statements: [readSecret] }, queue.deploy.retention);
 */
function retentionFunction(
  scope: Construct,
  spec: Omit<FunctionSpec, 'sizing'>,
  retention: ResolvedRetention,
): { readonly fn: LambdaFunction; readonly alarms: readonly Alarm[] } {
  const { fn } = boomerangFunction(scope, { ...spec, sizing: retention });
  new Rule(scope, `${spec.id}Schedule`, {
    description: `Invokes ${spec.functionName} every ${retention.rateHours} h: deletes what was parked ${retention.olderThan} ago or more`,
    schedule: Schedule.rate(Duration.hours(retention.rateHours)),
  }).addTarget(new LambdaTarget(fn));
  const failing = alarm(
    scope,
    `${spec.id}FailingAlarm`,
    `${spec.functionName} failed (threw or timed out): parked messages older than ${retention.olderThan} were not all deleted; the next run tries again. See its logs.`,
    fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
  );
  return { fn, alarms: [failing] };
}

export { retentionFunction };
