import { join } from 'node:path';
import { CfnOutput, CfnParameter, Duration, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { CfnEventSourceMapping, type Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { METRICS_NAMESPACE } from '../shared/metrics.js';
import { createBroker, existingBroker } from './broker.js';
import { DEFAULT_OUTDIR } from './bundles.js';
import { boomerangFunction } from './function.js';
import type { StackConfig } from './stack-config.js';

type BoomerangStackProps = StackProps & {
  readonly config: StackConfig;
  /** The folder with the bundles, `<bundleDir>/pull` and `<bundleDir>/event`. @default dist/ */
  readonly bundleDir?: string;
};

/** Actions the Amazon MQ event source mapping needs on the function's role (AWS Lambda guide, `with-mq`). */
const MAPPING_NETWORK_ACTIONS = ['ec2:CreateNetworkInterface', 'ec2:DeleteNetworkInterface', 'ec2:DescribeNetworkInterfaces', 'ec2:DescribeSecurityGroups', 'ec2:DescribeSubnets', 'ec2:DescribeVpcs'];

/**
 * Boomerang on AWS: the scheduled pull function, the event-triggered function with its Amazon MQ event
 * source mapping, both reading the broker credentials from one existing secret (referenced by ARN), an
 * alarm per function when messages are parked, and optionally the broker itself.
 * @example new BoomerangStack(app, 'Boomerang', { config: stackConfigFromContext((k) => app.node.tryGetContext(k)) });
 */
class BoomerangStack extends Stack {
  public readonly pullFunction: LambdaFunction;
  public readonly eventFunction: LambdaFunction;

  public constructor(scope: Construct, id: string, props: BoomerangStackProps) {
    super(scope, id, props);
    const { config } = props;
    const bundleDir = props.bundleDir ?? DEFAULT_OUTDIR;
    const secretArn = new CfnParameter(this, 'BrokerSecretArn', {
      type: 'String',
      description: 'Complete ARN of the Secrets Manager secret {"username","password"} of the broker user (the event source mapping and the functions read it)',
      allowedPattern: '^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+$',
    }).valueAsString;
    Validations.of(this).acknowledge({ id: 'CloudFormation-Validate::W2509', reason: 'BrokerSecretArn holds the ARN of the secret, not a secret: nothing to hide with NoEcho.' });
    const secret = Secret.fromSecretCompleteArn(this, 'BrokerSecret', secretArn);
    const broker = config.broker.kind === 'create' ? createBroker(this, secret, config.broker, config.network) : existingBroker(this);
    const readSecret = new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secretArn] });
    const common = { logRetention: config.logRetentionDays, network: config.network };
    const environment = (functionName: string): Record<string, string> => ({
      NODE_OPTIONS: '--enable-source-maps',
      WORK_QUEUE: config.workQueue,
      ...(config.parkingQueue === undefined ? {} : { PARKING_QUEUE: config.parkingQueue }),
      AMQP_SECRET_ID: secretArn,
      AMQP_HOST: broker.host,
      AMQP_VHOST: config.virtualHost,
      AMQP_TLS: 'true',
      FUNCTION_NAME: functionName,
      // The `service` dimension of the metrics (namespace Boomerang) and the alarms below.
      POWERTOOLS_SERVICE_NAME: functionName,
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      ...config.environment,
    });

    const pullName = `${this.stackName}-pull`;
    const pull = boomerangFunction(this, { id: 'Pull', functionName: pullName, bundlePath: join(bundleDir, 'pull'), sizing: config.pull, environment: environment(pullName), statements: [readSecret], reservedConcurrency: config.pull.reservedConcurrency, ...common });
    // A tick that waited longer than the interval is stale: the next one does its work.
    const maxEventAge = Duration.seconds(Math.max(60, config.pull.rateMinutes * 60));
    // No asynchronous retries: the next tick is the retry.
    pull.fn.configureAsyncInvoke({ retryAttempts: 0, maxEventAge });
    new Rule(this, 'PullSchedule', { description: `Invokes ${pullName} every ${config.pull.rateMinutes} min`, schedule: Schedule.rate(Duration.minutes(config.pull.rateMinutes)) })
      .addTarget(new LambdaTarget(pull.fn, { maxEventAge }));

    const eventName = `${this.stackName}-event`;
    const event = boomerangFunction(this, {
      id: 'Event',
      functionName: eventName,
      bundlePath: join(bundleDir, 'event'),
      sizing: config.event,
      environment: environment(eventName),
      statements: [readSecret, new PolicyStatement({ actions: ['mq:DescribeBroker'], resources: [broker.arn] }), new PolicyStatement({ actions: MAPPING_NETWORK_ACTIONS, resources: ['*'] })],
      ...common,
    });
    const mapping = new CfnEventSourceMapping(this, 'EventSourceMapping', {
      functionName: event.fn.functionName,
      eventSourceArn: broker.arn,
      queues: [config.workQueue],
      batchSize: config.event.batchSize,
      maximumBatchingWindowInSeconds: config.event.batchWindowSeconds,
      sourceAccessConfigurations: [
        { type: 'BASIC_AUTH', uri: secretArn },
        { type: 'VIRTUAL_HOST', uri: config.virtualHost },
      ],
    });
    // The mapping checks the role's permissions when it is created.
    mapping.node.addDependency(event.role);
    Validations.of(event.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: "The event source mapping creates and describes network interfaces in the broker's subnets; these EC2 actions do not support resource-level permissions.",
    });

    const topic = config.alarmTopicArn === undefined ? undefined : Topic.fromTopicArn(this, 'AlarmTopic', config.alarmTopicArn);
    const alarms = [
      parkedAlarm(this, 'PullParkedAlarm', pullName),
      parkedAlarm(this, 'EventParkedAlarm', eventName),
      new Alarm(this, 'EventFailingAlarm', {
        alarmDescription: `${eventName} threw: a batch was not settled and the event source delivers all of it again (duplicates for the messages that had succeeded). See its logs.`,
        metric: event.fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    ];
    if (topic) for (const alarm of alarms) alarm.addAlarmAction(new SnsAction(topic));

    this.pullFunction = pull.fn;
    this.eventFunction = event.fn;
    new CfnOutput(this, 'PullFunctionName', { value: pull.fn.functionName });
    new CfnOutput(this, 'EventFunctionName', { value: event.fn.functionName });
    new CfnOutput(this, 'BrokerHostName', { value: broker.host, description: 'AMQP_HOST of the functions: run `npm run topology -- apply` against it' });
  }
}

/** Fires when a function parked at least one message in 5 minutes (its EMF metric `parked`). */
function parkedAlarm(scope: Construct, id: string, functionName: string): Alarm {
  return new Alarm(scope, id, {
    alarmDescription: `${functionName} parked messages: they wait in the parking lot for a human (npm run parked).`,
    metric: new Metric({ namespace: METRICS_NAMESPACE, metricName: 'parked', dimensionsMap: { service: functionName }, statistic: 'Sum', period: Duration.minutes(5) }),
    threshold: 1,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}

export { BoomerangStack };
export type { BoomerangStackProps };
