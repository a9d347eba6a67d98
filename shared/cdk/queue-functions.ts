/**
 * The functions of one queue: each its bundle, environment, role, log group and sizing; the pull
 * function with the schedule that invokes it, the event function with its Amazon MQ event source
 * mapping, the retention function with its own schedule.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { CfnEventSourceMapping, type Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct, IDependable } from 'constructs';
import { ConfigError } from '../errors.js';
import type { Mode, ResolvedRetention } from '../queues/deploy-options.js';
import { alarm, type WatchedFunction } from './alarms.js';
import type { ResolvedSettings } from './boomerang-queues-props.js';
import type { BrokerEndpoint } from './broker.js';
import { bundledCode } from './bundle-code.js';
import type { Bundle } from './bundle-report.js';
import { bundleName, functionEntries, topologyEntry } from './bundles.js';
import type { DeployedQueue } from './deployed-queue.js';
import { boomerangFunction, type FunctionSpec } from './function.js';
import { functionEnvironment } from './function-environment.js';
import type { IdempotencyTable } from './idempotency-table.js';

/** What a queue deploys a function for: a mode, retention (`deploy.retention`), or its topology resource. */
type Kind = Mode | 'retention' | 'topology';

/** What every function of the construct shares. */
type Shared = {
  /** The first part of the function names. */
  readonly prefix: string;
  readonly settings: ResolvedSettings;
  readonly secretArn: string;
  readonly broker: BrokerEndpoint;
  /** `secretsmanager:GetSecretValue` on the broker secret. */
  readonly readSecret: PolicyStatement;
  /** The team's project, where esbuild resolves the queue files' imports from. */
  readonly workingDir: string;
  /** Hears of each bundle built. */
  readonly bundled: (bundle: Bundle) => void;
};

/** Actions the Amazon MQ event source mapping needs on the function's role (AWS Lambda guide, `with-mq`). */
const MAPPING_NETWORK_ACTIONS = [
  'ec2:CreateNetworkInterface',
  'ec2:DeleteNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeSecurityGroups',
  'ec2:DescribeSubnets',
  'ec2:DescribeVpcs',
];

/** Lambda refuses longer function names. */
const MAX_FUNCTION_NAME = 64;

const KIND_IDS: Readonly<Record<Kind, string>> = { pull: 'Pull', event: 'Event', retention: 'Retention', topology: 'Topology' };

/** `partner-sync` → `PartnerSync`: the queue's part of its construct ids. */
function constructId(queueName: string): string {
  return queueName
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/** `<prefix>-<queue>-<kind>`, checked against Lambda's limit. */
function functionName(prefix: string, queue: DeployedQueue, kind: Kind): string {
  const name = `${prefix}-${queue.name}-${kind}`;
  if (name.length > MAX_FUNCTION_NAME) {
    throw new ConfigError(
      `The function name ${name} is ${name.length} characters; Lambda allows ${MAX_FUNCTION_NAME}: shorten functionNamePrefix (by default the stack's name) or the name in ${queue.file}`,
    );
  }
  return name;
}

/** What the function of `kind` shares with the queue's others: ids, name, bundle, environment, grants, logs, network. */
function functionSpec(queue: DeployedQueue, kind: Kind, shared: Shared, table: IdempotencyTable | undefined) {
  const name = functionName(shared.prefix, queue, kind);
  const entry = [...functionEntries([{ ...queue, file: queue.path }]), topologyEntry({ name: queue.name, file: queue.path })].find(
    (e) => e.name === bundleName(queue.name, kind),
  );
  if (entry === undefined) throw new Error(`${queue.name} has no ${kind} bundle`);
  return {
    id: `${constructId(queue.name)}${KIND_IDS[kind]}`,
    functionName: name,
    code: bundledCode(entry, shared.workingDir, shared.bundled),
    environment: functionEnvironment(
      {
        virtualHost: queue.deploy.virtualHost,
        secretArn: shared.secretArn,
        brokerHost: shared.broker.host,
        functionName: name,
        idempotencyStore: table?.storeSetting,
        // Retention and the topology resource handle no message: they are not paced.
        rateLimitShares: kind === 'retention' || kind === 'topology' ? undefined : queue.rateLimitShares,
      },
      shared.settings.functionEnvironment,
    ),
    /** The guard's four item calls on the queue's own table, and the read of its Redis password secret, when it has them. */
    idempotencyStatements: [
      ...(table === undefined ? [] : [table.statement()]),
      ...(queue.storeSecretArn === undefined ? [] : [new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [queue.storeSecretArn] })]),
    ],
    logRetention: shared.settings.logRetention,
    network: shared.settings.network,
    // The segments of a queue's attempts go to Lambda's X-Ray daemon; retention and the topology resource handle no message.
    activeTracing: queue.tracing === 'xray' && (kind === 'pull' || kind === 'event'),
  };
}

/** The pull function and the schedule that invokes it. */
function pullFunction(scope: Construct, queue: DeployedQueue, shared: Shared, table: IdempotencyTable | undefined, topology: IDependable): WatchedFunction {
  const spec = { ...functionSpec(queue, 'pull', shared, table), sizing: queue.deploy.pull };
  const { rateMinutes, reservedConcurrency } = queue.deploy.pull;
  const pull = boomerangFunction(scope, { ...spec, statements: [shared.readSecret, ...spec.idempotencyStatements], reservedConcurrency });
  // A tick that waited longer than the interval is stale: the next one does its work.
  const maxEventAge = Duration.seconds(Math.max(60, rateMinutes * 60));
  // No asynchronous retries: the next tick is the retry.
  pull.fn.configureAsyncInvoke({ retryAttempts: 0, maxEventAge });
  const schedule = new Rule(scope, `${spec.id}Schedule`, {
    description: `Invokes ${spec.functionName} every ${rateMinutes} min`,
    schedule: Schedule.rate(Duration.minutes(rateMinutes)),
  });
  schedule.addTarget(new LambdaTarget(pull.fn, { maxEventAge }));
  // No tick before the queue's topology is applied: the function would find no delay path.
  schedule.node.addDependency(topology);
  return {
    id: spec.id,
    name: spec.functionName,
    ...pull,
    whenItFails: 'the tick ended early; the messages it held and had not settled go back to the queue for a later tick.',
  };
}

/** The event function and the event source mapping that invokes it with batches of the work queue. */
function eventFunction(scope: Construct, queue: DeployedQueue, shared: Shared, table: IdempotencyTable | undefined, topology: IDependable): WatchedFunction {
  const { broker } = shared;
  if (broker.arn === undefined)
    throw new ConfigError(`brokerArn is required: ${queue.name} deploys its event function (${queue.file}), whose event source mapping reads the broker's ARN`);
  const spec = { ...functionSpec(queue, 'event', shared, table), sizing: queue.deploy.event };
  const event = boomerangFunction(scope, {
    ...spec,
    statements: [
      shared.readSecret,
      ...spec.idempotencyStatements,
      new PolicyStatement({ actions: ['mq:DescribeBroker'], resources: [broker.arn] }),
      new PolicyStatement({ actions: MAPPING_NETWORK_ACTIONS, resources: ['*'] }),
    ],
  });
  const mapping = new CfnEventSourceMapping(scope, `${spec.id}SourceMapping`, {
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
  // The mapping checks the role's permissions when it is created, and reads a work queue the topology resource declares.
  mapping.node.addDependency(event.role, topology);
  Validations.of(event.role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      "The event source mapping creates and describes network interfaces in the broker's subnets; these EC2 actions do not support resource-level permissions.",
  });
  return {
    id: spec.id,
    name: spec.functionName,
    ...event,
    whenItFails: 'a batch was not settled and the event source delivers all of it again (duplicates for the messages that had succeeded).',
  };
}

/** The retention function of a queue with `deploy.retention`: it may read the broker secret, nothing else. */
function queueRetention(
  scope: Construct,
  queue: DeployedQueue,
  shared: Shared,
): { readonly id: string; readonly fn: LambdaFunction; readonly alarms: readonly Alarm[] } | undefined {
  if (queue.deploy.retention === undefined) return undefined;
  const { idempotencyStatements: _none, ...spec } = functionSpec(queue, 'retention', shared, undefined);
  const retention = retentionFunction(scope, { ...spec, statements: [shared.readSecret] } satisfies Omit<FunctionSpec, 'sizing'>, queue.deploy.retention);
  return { id: spec.id, ...retention };
}

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

export { constructId, eventFunction, functionName, functionSpec, pullFunction, queueRetention };
export type { Shared };
