import { join } from 'node:path';
import { Annotations, CfnOutput, CfnParameter, Duration, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { CfnEventSourceMapping, type Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { ConfigError } from '../shared/errors.js';
import type { Mode } from '../shared/queues/deploy-options.js';
import { functionAlarms, type WatchedFunction } from '../shared/cdk/alarms.js';
import { type BrokerEndpoint, createBroker, existingBroker } from '../shared/cdk/broker.js';
import { bundleName, DEFAULT_OUTDIR } from '../shared/cdk/bundles.js';
import { boomerangFunction } from '../shared/cdk/function.js';
import { functionEnvironment } from '../shared/cdk/function-environment.js';
import { IdempotencyTable } from '../shared/cdk/idempotency-table.js';
import { parkedDepthAlarm } from '../shared/cdk/parked-depth-alarm.js';
import { retentionFunction } from '../shared/cdk/retention.js';
import type { DeployedQueue } from '../shared/cdk/deployed-queue.js';
import type { StackConfig } from './stack-config.js';
import { timeoutWarnings } from '../shared/cdk/timeout-warnings.js';

type BoomerangStackProps = StackProps & {
  readonly config: StackConfig;
  /** The folder with the bundles, `<bundleDir>/<queue>-<mode>` and `<bundleDir>/<queue>-retention`. @default dist/ */
  readonly bundleDir?: string;
};

/** Actions the Amazon MQ event source mapping needs on the function's role (AWS Lambda guide, `with-mq`). */
const MAPPING_NETWORK_ACTIONS = ['ec2:CreateNetworkInterface', 'ec2:DeleteNetworkInterface', 'ec2:DescribeNetworkInterfaces', 'ec2:DescribeSecurityGroups', 'ec2:DescribeSubnets', 'ec2:DescribeVpcs'];

/** Lambda refuses longer function names. */
const MAX_FUNCTION_NAME = 64;

/** What every queue's functions share. */
/** What a queue deploys a function for: a mode, or retention (`deploy.retention`). */
type Kind = Mode | 'retention';

const KIND_IDS: Readonly<Record<Kind, string>> = { pull: 'Pull', event: 'Event', retention: 'Retention' };

type Shared = {
  readonly config: StackConfig;
  readonly bundleDir: string;
  readonly secretArn: string;
  readonly broker: BrokerEndpoint;
  readonly readSecret: PolicyStatement;
};

/**
 * Boomerang on AWS for every declared queue, each served the way its `deploy.modes` says: the scheduled
 * pull function, and/or the event-triggered function with its Amazon MQ event source mapping. The
 * functions read the broker credentials from one existing secret (referenced by ARN); each has its own
 * log group and alarms on parked messages, errors and timeouts; each queue an alarm on its parking
 * lot's depth and, with `deploy.retention`, a retention function on a schedule; optionally the stack
 * creates the broker.
 * @example new BoomerangStack(app, 'Boomerang', { config: stackConfigFromContext(app.node.getAllContext(), await loadDeclaredQueues()) });
 */
class BoomerangStack extends Stack {
  /** Each deployed function, by `<queue>-<mode>` or `<queue>-retention` (its bundle's name). */
  public readonly functions: ReadonlyMap<string, LambdaFunction>;

  public constructor(scope: Construct, id: string, props: BoomerangStackProps) {
    super(scope, id, props);
    const { config } = props;
    const secretArn = new CfnParameter(this, 'BrokerSecretArn', {
      type: 'String',
      description: 'Complete ARN of the Secrets Manager secret {"username","password"} of the broker user (the event source mappings and the functions read it)',
      allowedPattern: '^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+$',
    }).valueAsString;
    Validations.of(this).acknowledge({ id: 'CloudFormation-Validate::W2509', reason: 'BrokerSecretArn holds the ARN of the secret, not a secret: nothing to hide with NoEcho.' });
    const secret = Secret.fromSecretCompleteArn(this, 'BrokerSecret', secretArn);
    // Only an event source mapping needs the broker's ARN: a pull-only stack asks for none.
    const withArn = config.queues.some((q) => q.deploy.modes.includes('event'));
    const broker = config.broker.kind === 'create' ? createBroker(this, secret, config.broker, config.network) : existingBroker(this, { withArn });
    const shared: Shared = { config, bundleDir: props.bundleDir ?? DEFAULT_OUTDIR, secretArn, broker, readSecret: new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secretArn] }) };
    const topic = config.alarmTopicArn === undefined ? undefined : Topic.fromTopicArn(this, 'AlarmTopic', config.alarmTopicArn);
    const notify = (alarms: readonly (Alarm | undefined)[]): void => {
      for (const alarm of alarms) if (alarm && topic) alarm.addAlarmAction(new SnsAction(topic));
    };
    const functions = new Map<string, LambdaFunction>();
    for (const queue of config.queues) {
      // One table per queue that asks for one: its keys are its own, and its functions may touch no other's.
      const table = queue.deploy.idempotencyTable ? new IdempotencyTable(this, `${constructId(queue.name)}Idempotency`) : undefined;
      for (const mode of queue.deploy.modes) {
        const watched = mode === 'pull' ? this.pullFunction(queue, shared, table) : this.eventFunction(queue, shared, table);
        notify(functionAlarms(this, watched));
        functions.set(bundleName(queue.name, mode), watched.fn);
        new CfnOutput(this, `${watched.id}FunctionName`, { value: watched.fn.functionName, description: `The ${mode} function of ${queue.name} (${queue.file})` });
      }
      notify([parkedDepthAlarm(this, constructId(queue.name), queue, queue.deploy.modes.map((mode) => this.functionName(queue, mode)))]);
      if (queue.deploy.retention) {
        const retention = retentionFunction(this, { ...this.common(queue, 'retention', shared, undefined), statements: [shared.readSecret] }, queue.deploy.retention);
        notify(retention.alarms);
        functions.set(bundleName(queue.name, 'retention'), retention.fn);
        new CfnOutput(this, `${constructId(queue.name)}RetentionFunctionName`, { value: retention.fn.functionName, description: `The retention function of ${queue.name} (${queue.file})` });
      }
      for (const { mode, message } of timeoutWarnings(queue)) {
        const fn = functions.get(bundleName(queue.name, mode));
        if (fn) Annotations.of(fn).addWarningV2('@boomerang/infra:timeout', message);
      }
    }
    this.functions = functions;
    new CfnOutput(this, 'BrokerHostName', { value: broker.host, description: 'AMQP_HOST of the functions: run `npm run topology -- apply` against it' });
  }

  /** `<stackName>-<queue>-<kind>`, checked against Lambda's limit. */
  private functionName(queue: DeployedQueue, kind: Kind): string {
    const name = `${this.stackName}-${queue.name}-${kind}`;
    if (name.length > MAX_FUNCTION_NAME) {
      throw new ConfigError(`The function name ${name} is ${name.length} characters; Lambda allows ${MAX_FUNCTION_NAME}: shorten the stackName context or the name in ${queue.file}`);
    }
    return name;
  }

  private common(queue: DeployedQueue, kind: Kind, shared: Shared, table: IdempotencyTable | undefined) {
    const name = this.functionName(queue, kind);
    const idempotencyStore = table?.storeSetting;
    return {
      id: `${constructId(queue.name)}${KIND_IDS[kind]}`,
      functionName: name,
      bundlePath: join(shared.bundleDir, bundleName(queue.name, kind)),
      environment: functionEnvironment({ virtualHost: queue.deploy.virtualHost, secretArn: shared.secretArn, brokerHost: shared.broker.host, functionName: name, idempotencyStore }, shared.config.environment),
      /** The guard's four item calls on the queue's own table, and the read of its Redis password secret, when it has them. */
      idempotencyStatements: [
        ...(table === undefined ? [] : [table.statement()]),
        ...(queue.storeSecretArn === undefined ? [] : [new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [queue.storeSecretArn] })]),
      ],
      logRetention: shared.config.logRetentionDays,
      network: shared.config.network,
    };
  }

  /** The pull function and the schedule that invokes it. */
  private pullFunction(queue: DeployedQueue, shared: Shared, table: IdempotencyTable | undefined): WatchedFunction {
    const spec = { ...this.common(queue, 'pull', shared, table), sizing: queue.deploy.pull };
    const { rateMinutes, reservedConcurrency } = queue.deploy.pull;
    const pull = boomerangFunction(this, { ...spec, statements: [shared.readSecret, ...spec.idempotencyStatements], reservedConcurrency });
    // A tick that waited longer than the interval is stale: the next one does its work.
    const maxEventAge = Duration.seconds(Math.max(60, rateMinutes * 60));
    // No asynchronous retries: the next tick is the retry.
    pull.fn.configureAsyncInvoke({ retryAttempts: 0, maxEventAge });
    new Rule(this, `${spec.id}Schedule`, { description: `Invokes ${spec.functionName} every ${rateMinutes} min`, schedule: Schedule.rate(Duration.minutes(rateMinutes)) })
      .addTarget(new LambdaTarget(pull.fn, { maxEventAge }));
    return { id: spec.id, name: spec.functionName, ...pull, whenItFails: 'the tick ended early; the messages it held and had not settled go back to the queue for a later tick.' };
  }

  /** The event function and the event source mapping that invokes it with batches of the work queue. */
  private eventFunction(queue: DeployedQueue, shared: Shared, table: IdempotencyTable | undefined): WatchedFunction {
    const { broker } = shared;
    if (broker.arn === undefined) throw new Error('the event source mapping needs the broker ARN: existingBroker must be asked for it');
    const spec = { ...this.common(queue, 'event', shared, table), sizing: queue.deploy.event };
    const event = boomerangFunction(this, {
      ...spec,
      statements: [shared.readSecret, ...spec.idempotencyStatements, new PolicyStatement({ actions: ['mq:DescribeBroker'], resources: [broker.arn] }), new PolicyStatement({ actions: MAPPING_NETWORK_ACTIONS, resources: ['*'] })],
    });
    const mapping = new CfnEventSourceMapping(this, `${spec.id}SourceMapping`, {
      functionName: event.fn.functionName,
      eventSourceArn: broker.arn,
      queues: [queue.workQueue],
      batchSize: queue.deploy.event.batchSize,
      maximumBatchingWindowInSeconds: queue.deploy.event.batchWindowSeconds,
      sourceAccessConfigurations: [
        { type: 'BASIC_AUTH', uri: shared.secretArn },
        { type: 'VIRTUAL_HOST', uri: queue.deploy.virtualHost },
      ],
    });
    // The mapping checks the role's permissions when it is created.
    mapping.node.addDependency(event.role);
    Validations.of(event.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: "The event source mapping creates and describes network interfaces in the broker's subnets; these EC2 actions do not support resource-level permissions.",
    });
    return { id: spec.id, name: spec.functionName, ...event, whenItFails: 'a batch was not settled and the event source delivers all of it again (duplicates for the messages that had succeeded).' };
  }
}

/** `partner-sync` → `PartnerSync`: the queue's part of its construct ids. */
function constructId(queueName: string): string {
  return queueName.split('-').map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join('');
}

export { BoomerangStack };
export type { BoomerangStackProps };
