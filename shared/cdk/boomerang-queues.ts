import { resolve } from 'node:path';
import { Annotations, CfnOutput, Stack } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { type Grant, type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { functionsDir } from '../queues/declared-queues.js';
import { functionAlarms } from './alarms.js';
import { type BoomerangQueuesProps, checkProps } from './boomerang-queues-props.js';
import { type BrokerEndpoint, createBroker } from './broker.js';
import type { Bundle } from './bundle-report.js';
import { bundleName } from './bundles.js';
import { readQueueDefinitions } from './definitions.js';
import type { DeployedQueue } from './deployed-queue.js';
import { IdempotencyTable } from './idempotency-table.js';
import { operatorFunction } from './operator-function.js';
import { parkedDepthAlarm } from './parked-depth-alarm.js';
import { constructId, eventFunction, functionName, pullFunction, queueRetention, type Shared } from './queue-functions.js';
import { timeoutWarnings } from './timeout-warnings.js';
import { queueTopology } from './topology-resource.js';

/**
 * Boomerang on AWS for every queue declared in a functions folder (or a list of files), each served the
 * way its `deploy` says: the scheduled pull function and/or the event-triggered function with its Amazon
 * MQ event source mapping, with `deploy.retention` a retention function on a schedule, and with
 * `idempotency: { store: 'dynamodb' }` a DynamoDB table of its own; and for every queue a custom
 * resource that applies its topology on deploy, before its schedule or mapping exists
 * (topology-resource.ts). The functions read the broker
 * credentials from one existing secret; each has its own role, log group and alarms on parked
 * messages, errors and timeouts, and each queue an alarm on its parking lot's depth. One operator
 * function (`<prefix>-operator`, in the same network, invoked through IAM only: `grantOperate`) runs the
 * parking-lot commands for `boomerang parked … --remote`. Optionally it creates the broker. It adds no cdk-nag check itself, and acknowledges, each with its reason, the
 * findings its resources must keep (AwsSolutions-L1, AwsSolutions-IAM5 for the EC2 network actions).
 *
 * The constructor reads the definitions in a child node process (they are ES modules) and bundles each
 * function with esbuild at synth, unless the stack's bundling is skipped.
 * @example
 * new BoomerangQueues(this, 'Queues', {
 *   brokerSecret: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/broker-AbCdEf',
 *   brokerHost: 'b-1234abcd-0000-0000-0000-000000000000.mq.eu-west-1.amazonaws.com',
 *   brokerArn: 'arn:aws:mq:eu-west-1:123456789012:broker:orders:b-1234abcd-0000-0000-0000-000000000000',
 * });
 */
class BoomerangQueues extends Construct {
  /** Each deployed function, by `<queue>-<mode>` or `<queue>-retention`. */
  public readonly functions: ReadonlyMap<string, LambdaFunction>;
  /** Where the functions find the broker: its AMQPS host, and its ARN when known. */
  public readonly broker: BrokerEndpoint;
  /** The queues deployed, as their files declare them, in the order of the files. */
  public readonly queues: readonly DeployedQueue[];
  /** The bundles built while the construct was made, with their sizes (none when the stack's bundling is skipped). */
  public readonly bundles: readonly Bundle[];
  /** The operator function (`<prefix>-operator`): `boomerang parked … --remote` runs through it (docs/operations.md). */
  public readonly operator: LambdaFunction;
  private readonly operatorGrant: (grantee: IGrantable) => Grant;

  public constructor(scope: Construct, id: string, props: BoomerangQueuesProps) {
    super(scope, id);
    const settings = checkProps(props);
    const source =
      props.files === undefined ? { functionsDir: functionsDir({ dir: props.functionsDir }) } : { files: props.files.map((file) => resolve(file)) };
    this.queues = readQueueDefinitions({ ...source, functionEnvironment: settings.functionEnvironment });
    const prefix = props.functionNamePrefix ?? Stack.of(this).stackName;
    const secret = typeof props.brokerSecret === 'string' ? Secret.fromSecretCompleteArn(this, 'BrokerSecret', props.brokerSecret) : props.brokerSecret;
    this.broker =
      settings.broker === undefined
        ? { arn: props.brokerArn, host: props.brokerHost as string }
        : createBroker(this, { secret, options: settings.broker, network: settings.network, prefix });
    const bundles: Bundle[] = [];
    const shared: Shared = {
      prefix,
      settings,
      secretArn: settings.secretArn,
      broker: this.broker,
      readSecret: new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [settings.secretArn] }),
      workingDir: process.cwd(),
      bundled: (bundle) => bundles.push(bundle),
    };
    const notify = (alarms: readonly (Alarm | undefined)[]): void => {
      for (const alarm of alarms) if (alarm && props.alarmTopic) alarm.addAlarmAction(new SnsAction(props.alarmTopic));
    };
    const functions = new Map<string, LambdaFunction>();
    for (const queue of this.queues) {
      // One table per queue that asks for one: its keys are its own, and its functions may touch no other's.
      const table = queue.deploy.idempotencyTable ? new IdempotencyTable(this, `${constructId(queue.name)}Idempotency`) : undefined;
      // The queue's topology first: its schedule and event source mapping wait for it.
      const topology = queueTopology(this, queue, shared);
      for (const mode of queue.deploy.modes) {
        const watched = mode === 'pull' ? pullFunction(this, queue, shared, table, topology) : eventFunction(this, queue, shared, table, topology);
        notify(functionAlarms(this, watched));
        functions.set(bundleName(queue.name, mode), watched.fn);
        new CfnOutput(this, `${watched.id}FunctionName`, {
          value: watched.fn.functionName,
          description: `The ${mode} function of ${queue.name} (${queue.file})`,
        });
      }
      notify([
        parkedDepthAlarm(
          this,
          constructId(queue.name),
          queue,
          queue.deploy.modes.map((mode) => functionName(prefix, queue, mode)),
        ),
      ]);
      const retention = queueRetention(this, queue, shared);
      if (retention) {
        notify(retention.alarms);
        functions.set(bundleName(queue.name, 'retention'), retention.fn);
        new CfnOutput(this, `${retention.id}FunctionName`, {
          value: retention.fn.functionName,
          description: `The retention function of ${queue.name} (${queue.file})`,
        });
      }
      for (const { mode, message } of timeoutWarnings(queue)) {
        const fn = functions.get(bundleName(queue.name, mode));
        if (fn) Annotations.of(fn).addWarningV2('boomerang-rabbitmq:timeout', message);
      }
      // The deployed functions log it at their cold start too; the synth says it first.
      for (const line of queue.overrides) Annotations.of(this).addInfo(`functionEnvironment: ${line}`);
    }
    const operator = operatorFunction(this, this.queues, shared);
    this.operator = operator.fn;
    this.operatorGrant = operator.grantOperate;
    this.functions = functions;
    this.bundles = bundles;
    new CfnOutput(this, 'BrokerHostName', { value: this.broker.host, description: 'AMQP_HOST of the functions: run `boomerang topology apply` against it' });
  }

  /**
   * Lets `grantee` (an operators' role) invoke the operator function, and so list, show, replay and
   * purge every parking lot of this construct with `--remote`: `lambda:InvokeFunction` on that one function.
   * @example queues.grantOperate(Role.fromRoleName(this, 'Operators', 'oncall'));
   */
  public grantOperate(grantee: IGrantable): Grant {
    return this.operatorGrant(grantee);
  }
}

export { BoomerangQueues };
