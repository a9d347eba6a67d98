import { join } from 'node:path';
import { Annotations, CfnOutput, CfnParameter, Duration, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { CfnEventSourceMapping, type Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { functionAlarms, type WatchedFunction } from './alarms.js';
import { type BrokerEndpoint, createBroker, existingBroker } from './broker.js';
import { DEFAULT_OUTDIR } from './bundles.js';
import { boomerangFunction } from './function.js';
import { functionEnvironment } from './function-environment.js';
import type { StackConfig } from './stack-config.js';
import { timeoutWarnings } from './timeout-warnings.js';

type BoomerangStackProps = StackProps & {
  readonly config: StackConfig;
  /** The folder with the bundles, `<bundleDir>/pull` and `<bundleDir>/event`. @default dist/ */
  readonly bundleDir?: string;
};

/** Actions the Amazon MQ event source mapping needs on the function's role (AWS Lambda guide, `with-mq`). */
const MAPPING_NETWORK_ACTIONS = ['ec2:CreateNetworkInterface', 'ec2:DeleteNetworkInterface', 'ec2:DescribeNetworkInterfaces', 'ec2:DescribeSecurityGroups', 'ec2:DescribeSubnets', 'ec2:DescribeVpcs'];

/**
 * Boomerang on AWS for one queue, served the way `config.queue.modes` says: the scheduled pull function,
 * and/or the event-triggered function with its Amazon MQ event source mapping. The functions read the
 * broker credentials from one existing secret (referenced by ARN); each has alarms on parked messages,
 * errors and timeouts; optionally the stack creates the broker itself.
 * @example new BoomerangStack(app, 'Boomerang', { config: stackConfigFromContext(app.node.getAllContext()) });
 */
class BoomerangStack extends Stack {
  /** Undefined when the modes leave the function out. */
  public readonly pullFunction: LambdaFunction | undefined;
  public readonly eventFunction: LambdaFunction | undefined;

  public constructor(scope: Construct, id: string, props: BoomerangStackProps) {
    super(scope, id, props);
    const { config } = props;
    const { modes } = config.queue;
    const bundleDir = props.bundleDir ?? DEFAULT_OUTDIR;
    const secretArn = new CfnParameter(this, 'BrokerSecretArn', {
      type: 'String',
      description: 'Complete ARN of the Secrets Manager secret {"username","password"} of the broker user (the event source mapping and the functions read it)',
      allowedPattern: '^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+$',
    }).valueAsString;
    Validations.of(this).acknowledge({ id: 'CloudFormation-Validate::W2509', reason: 'BrokerSecretArn holds the ARN of the secret, not a secret: nothing to hide with NoEcho.' });
    const secret = Secret.fromSecretCompleteArn(this, 'BrokerSecret', secretArn);
    // Only the event source mapping needs the broker's ARN: a pull-only stack asks for none.
    const broker = config.broker.kind === 'create' ? createBroker(this, secret, config.broker, config.network) : existingBroker(this, { withArn: modes.includes('event') });
    const readSecret = new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secretArn] });
    const common = { logRetention: config.logRetentionDays, network: config.network };
    const environment = (functionName: string): Record<string, string> =>
      functionEnvironment({ ...config.queue, secretArn, brokerHost: broker.host, functionName }, config.environment);
    const watched: WatchedFunction[] = [];

    if (modes.includes('pull')) {
      const name = `${this.stackName}-pull`;
      const pull = boomerangFunction(this, { id: 'Pull', functionName: name, bundlePath: join(bundleDir, 'pull'), sizing: config.pull, environment: environment(name), statements: [readSecret], reservedConcurrency: config.pull.reservedConcurrency, ...common });
      // A tick that waited longer than the interval is stale: the next one does its work.
      const maxEventAge = Duration.seconds(Math.max(60, config.pull.rateMinutes * 60));
      // No asynchronous retries: the next tick is the retry.
      pull.fn.configureAsyncInvoke({ retryAttempts: 0, maxEventAge });
      new Rule(this, 'PullSchedule', { description: `Invokes ${name} every ${config.pull.rateMinutes} min`, schedule: Schedule.rate(Duration.minutes(config.pull.rateMinutes)) })
        .addTarget(new LambdaTarget(pull.fn, { maxEventAge }));
      watched.push({ id: 'Pull', name, ...pull, whenItFails: 'the tick ended early; the messages it held and had not settled go back to the queue for a later tick.' });
      this.pullFunction = pull.fn;
      new CfnOutput(this, 'PullFunctionName', { value: pull.fn.functionName });
    }

    if (modes.includes('event')) {
      const name = `${this.stackName}-event`;
      const event = eventFunction(this, { name, bundlePath: join(bundleDir, 'event'), config, broker, secretArn, readSecret, environment: environment(name), ...common });
      watched.push({ id: 'Event', name, ...event, whenItFails: 'a batch was not settled and the event source delivers all of it again (duplicates for the messages that had succeeded).' });
      this.eventFunction = event.fn;
      new CfnOutput(this, 'EventFunctionName', { value: event.fn.functionName });
    }

    const topic = config.alarmTopicArn === undefined ? undefined : Topic.fromTopicArn(this, 'AlarmTopic', config.alarmTopicArn);
    for (const one of watched) {
      for (const alarm of functionAlarms(this, one)) if (topic) alarm.addAlarmAction(new SnsAction(topic));
    }
    for (const { mode, message } of timeoutWarnings(config)) {
      const fn = mode === 'pull' ? this.pullFunction : this.eventFunction;
      if (fn) Annotations.of(fn).addWarningV2('@boomerang/infra:timeout', message);
    }
    new CfnOutput(this, 'BrokerHostName', { value: broker.host, description: 'AMQP_HOST of the functions: run `npm run topology -- apply` against it' });
  }
}

type EventFunctionSpec = Pick<Parameters<typeof boomerangFunction>[1], 'logRetention' | 'network' | 'environment' | 'bundlePath'> & {
  readonly name: string;
  readonly config: StackConfig;
  readonly broker: BrokerEndpoint;
  readonly secretArn: string;
  readonly readSecret: PolicyStatement;
};

/** The event function and the event source mapping that invokes it with batches of the work queue. */
function eventFunction(scope: Construct, spec: EventFunctionSpec): ReturnType<typeof boomerangFunction> {
  const { config, broker } = spec;
  if (broker.arn === undefined) throw new Error('the event source mapping needs the broker ARN: existingBroker must be asked for it');
  const event = boomerangFunction(scope, {
    id: 'Event',
    functionName: spec.name,
    bundlePath: spec.bundlePath,
    sizing: config.event,
    environment: spec.environment,
    statements: [spec.readSecret, new PolicyStatement({ actions: ['mq:DescribeBroker'], resources: [broker.arn] }), new PolicyStatement({ actions: MAPPING_NETWORK_ACTIONS, resources: ['*'] })],
    logRetention: spec.logRetention,
    network: spec.network,
  });
  const mapping = new CfnEventSourceMapping(scope, 'EventSourceMapping', {
    functionName: event.fn.functionName,
    eventSourceArn: broker.arn,
    queues: [config.queue.workQueue],
    batchSize: config.event.batchSize,
    maximumBatchingWindowInSeconds: config.event.batchWindowSeconds,
    sourceAccessConfigurations: [
      { type: 'BASIC_AUTH', uri: spec.secretArn },
      { type: 'VIRTUAL_HOST', uri: config.queue.virtualHost },
    ],
  });
  // The mapping checks the role's permissions when it is created.
  mapping.node.addDependency(event.role);
  Validations.of(event.role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason: "The event source mapping creates and describes network interfaces in the broker's subnets; these EC2 actions do not support resource-level permissions.",
  });
  return event;
}

export { BoomerangStack };
export type { BoomerangStackProps };
