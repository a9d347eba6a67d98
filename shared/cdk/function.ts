import { Duration, Validations } from 'aws-cdk-lib';
import { PolicyDocument, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, type CfnFunction, type Code, Function as LambdaFunction, LoggingFormat, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { FunctionSizing } from '../queues/deploy-options.js';
import type { Network } from './network.js';

/** Lambda's Node.js runtime the bundles run on (they are built for Node 20; nodejs20.x is deprecated). */
const RUNTIME = Runtime.NODEJS_22_X;

/** ENI actions Lambda needs to put a function into a VPC; they take no resource-level permissions. */
const VPC_ACCESS_ACTIONS = [
  'ec2:CreateNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DeleteNetworkInterface',
  'ec2:AssignPrivateIpAddresses',
  'ec2:UnassignPrivateIpAddresses',
];

type FunctionSpec = {
  /** Construct id prefix: `WebhooksPull`, `WebhooksEvent`. */
  readonly id: string;
  readonly functionName: string;
  /** The bundle: a folder whose `index.mjs` exports `handler` (bundle-code.ts). */
  readonly code: Code;
  readonly sizing: FunctionSizing;
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetention: RetentionDays;
  readonly network: Network | undefined;
  /** What the function may do besides writing its logs. */
  readonly statements: readonly PolicyStatement[];
  /** 0 or undefined: unreserved. */
  readonly reservedConcurrency?: number;
  /**
   * Lambda's active X-Ray tracing: the daemon each attempt's segment goes to (a queue with
   * `tracing: 'xray'`), with the two X-Ray actions on the role. @default false
   */
  readonly activeTracing?: boolean;
};

/**
 * One Boomerang function: its bundle, its own log group with a retention, and its own role holding
 * exactly its statements (no managed policy), plus the ENI actions when it runs in a VPC.
 * @example const { fn, role, logGroup } = boomerangFunction(stack, { id: 'Pull', functionName: 'boomerang-pull', ... });
 */
function boomerangFunction(scope: Construct, spec: FunctionSpec): { readonly fn: LambdaFunction; readonly role: Role; readonly logGroup: LogGroup } {
  const logGroup = new LogGroup(scope, `${spec.id}Logs`, { retention: spec.logRetention });
  const statements = [
    new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }),
    ...spec.statements,
    ...(spec.network ? [new PolicyStatement({ actions: VPC_ACCESS_ACTIONS, resources: ['*'] })] : []),
  ];
  // Inline in the role: the function (and an event source mapping) then depends on one resource that holds it all.
  const role = new Role(scope, `${spec.id}Role`, {
    assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    inlinePolicies: { boomerang: new PolicyDocument({ statements }) },
  });
  const fn = new LambdaFunction(scope, `${spec.id}Function`, {
    functionName: spec.functionName,
    runtime: RUNTIME,
    architecture: Architecture.ARM_64,
    code: spec.code,
    handler: 'index.handler',
    timeout: Duration.seconds(spec.sizing.timeoutSeconds),
    memorySize: spec.sizing.memoryMb,
    environment: { ...spec.environment },
    logGroup,
    // Text, the runtime's default, pinned: the timeout alarm's filter matches the runtime's text line (alarms.ts).
    loggingFormat: LoggingFormat.TEXT,
    role,
    reservedConcurrentExecutions: spec.reservedConcurrency || undefined,
    // Active tracing starts the X-Ray daemon and grants xray:PutTraceSegments and PutTelemetryRecords (in the role's default policy).
    tracing: spec.activeTracing ? Tracing.ACTIVE : undefined,
  });
  if (spec.network) {
    // Plain ids, so synth needs no VPC lookup (and no AWS credentials).
    (fn.node.defaultChild as CfnFunction).vpcConfig = { subnetIds: [...spec.network.subnetIds], securityGroupIds: [...spec.network.securityGroupIds] };
  }
  Validations.of(fn).acknowledge({
    id: 'AwsSolutions-L1',
    reason: `Pinned to ${RUNTIME.name}, the closest runtime to the Node 20 the bundles are built and tested for; an upgrade is a deliberate change, not a synth-time drift.`,
  });
  if (spec.network) {
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'The EC2 network-interface actions a function in a VPC needs do not support resource-level permissions.',
    });
  }
  if (spec.activeTracing) {
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'xray:PutTraceSegments and xray:PutTelemetryRecords, which active tracing grants, do not support resource-level permissions.',
    });
  }
  return { fn, role, logGroup };
}

export { boomerangFunction };
export type { FunctionSpec };
