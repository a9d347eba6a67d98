/**
 * The deploy-time choices of the Boomerang stack, read from CDK context (`cdk deploy -c key=value`, or
 * a `context` object): shapes and sizes known at synth. Values that differ per account (the secret's
 * ARN, the broker's ARN and host) are CloudFormation parameters instead, so synth needs none of them.
 */
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { envChoice, envInt, envJson, envString, type Env } from '../shared/env.js';
import { ConfigError } from '../shared/errors.js';

/** Timeout and memory of one function. */
type FunctionSizing = { readonly timeoutSeconds: number; readonly memoryMb: number };

/** Everything the stack reads from context, validated; see `CONTEXT_DEFAULTS` for the defaults. */
type StackConfig = {
  /** The queue both functions serve (WORK_QUEUE) and the event source mapping consumes. */
  readonly workQueue: string;
  /** PARKING_QUEUE; undefined leaves the function's default (`<workQueue>.parked`). */
  readonly parkingQueue: string | undefined;
  /** The vhost of the queue: the mapping's VIRTUAL_HOST and the functions' AMQP_VHOST. */
  readonly virtualHost: string;
  readonly pull: FunctionSizing & {
    /** The schedule: one invocation every this many minutes. */
    readonly rateMinutes: number;
    /** Reserved concurrency; 0 leaves it unreserved. 1 keeps overlapping ticks from competing. */
    readonly reservedConcurrency: number;
  };
  readonly event: FunctionSizing & {
    readonly batchSize: number;
    /** MaximumBatchingWindowInSeconds; undefined keeps the service default (500 ms), which cannot be set back once changed. */
    readonly batchWindowSeconds: number | undefined;
  };
  readonly logRetentionDays: RetentionDays;
  /** An SNS topic ARN the alarms notify; none when undefined. */
  readonly alarmTopicArn: string | undefined;
  /** `create`: the stack creates a single-instance Amazon MQ for RabbitMQ broker. */
  readonly broker: { readonly kind: 'existing' } | { readonly kind: 'create'; readonly instanceType: string; readonly engineVersion: string };
  /** Subnets and security groups for the functions (and a created broker): a private broker needs them. */
  readonly network: { readonly subnetIds: readonly string[]; readonly securityGroupIds: readonly string[] } | undefined;
  /** More environment variables for both functions (MAX_RETRIES, BACKOFF_*, RETRY_RULES, DELAY_MODE...). */
  readonly environment: Readonly<Record<string, string>>;
};

/** The context keys and their defaults (a key missing here is required or optional without default). */
const CONTEXT_DEFAULTS = {
  workQueue: 'boomerang.work',
  virtualHost: '/',
  pullRateMinutes: 1,
  pullReservedConcurrency: 1,
  pullTimeoutSeconds: 60,
  pullMemoryMb: 256,
  eventTimeoutSeconds: 60,
  eventMemoryMb: 256,
  eventBatchSize: 100,
  logRetentionDays: 30,
  brokerInstanceType: 'mq.t3.micro',
  brokerEngineVersion: '3.13',
} as const;

/**
 * Reads and checks the context; throws `ConfigError` naming the first bad key.
 * @example stackConfigFromContext((key) => app.node.tryGetContext(key))
 */
function stackConfigFromContext(get: (key: string) => unknown): StackConfig {
  // Context values are strings from `-c`, or JSON values from cdk.json: read both as text.
  const env: Env = new Proxy({}, { get: (_target, key: string) => textOf(get(key)) });
  const d = CONTEXT_DEFAULTS;
  const retention = envInt(env, 'logRetentionDays', d.logRetentionDays, 1, 3653);
  if (!(Object.values(RetentionDays) as unknown[]).includes(retention)) {
    throw new ConfigError(`logRetentionDays must be one of CloudWatch's retention periods (1, 3, 5, 7, 14, 30, 60, 90, ...); got ${retention}`);
  }
  const windowSeconds = envString(env, 'eventBatchWindowSeconds');
  return {
    workQueue: envString(env, 'workQueue') ?? d.workQueue,
    parkingQueue: envString(env, 'parkingQueue'),
    virtualHost: envString(env, 'virtualHost') ?? d.virtualHost,
    pull: {
      rateMinutes: envInt(env, 'pullRateMinutes', d.pullRateMinutes, 1, 1440),
      reservedConcurrency: envInt(env, 'pullReservedConcurrency', d.pullReservedConcurrency, 0, 1000),
      timeoutSeconds: envInt(env, 'pullTimeoutSeconds', d.pullTimeoutSeconds, 10, 900),
      memoryMb: envInt(env, 'pullMemoryMb', d.pullMemoryMb, 128, 10_240),
    },
    event: {
      timeoutSeconds: envInt(env, 'eventTimeoutSeconds', d.eventTimeoutSeconds, 10, 900),
      memoryMb: envInt(env, 'eventMemoryMb', d.eventMemoryMb, 128, 10_240),
      batchSize: envInt(env, 'eventBatchSize', d.eventBatchSize, 1, 10_000),
      batchWindowSeconds: windowSeconds === undefined ? undefined : envInt(env, 'eventBatchWindowSeconds', 0, 0, 300),
    },
    logRetentionDays: retention as RetentionDays,
    alarmTopicArn: envString(env, 'alarmTopicArn'),
    broker: envChoice(env, 'createBroker', ['true', 'false'], 'false') === 'true'
      ? { kind: 'create', instanceType: envString(env, 'brokerInstanceType') ?? d.brokerInstanceType, engineVersion: envString(env, 'brokerEngineVersion') ?? d.brokerEngineVersion }
      : { kind: 'existing' },
    network: network(env),
    environment: environment(env),
  };
}

function network(env: Env): StackConfig['network'] {
  const subnetIds = list(envString(env, 'subnetIds'));
  const securityGroupIds = list(envString(env, 'securityGroupIds'));
  if (subnetIds.length === 0 && securityGroupIds.length === 0) return undefined;
  if (subnetIds.length === 0 || securityGroupIds.length === 0) {
    throw new ConfigError('subnetIds and securityGroupIds go together: set both (ids comma-separated) or neither');
  }
  const badSubnet = subnetIds.find((id) => !/^subnet-[0-9a-f]{8}([0-9a-f]{9})?$/.test(id));
  const badGroup = securityGroupIds.find((id) => !/^sg-[0-9a-f]{8}([0-9a-f]{9})?$/.test(id));
  if (badSubnet !== undefined) throw new ConfigError(`subnetIds must be subnet ids (subnet-0123456789abcdef0); got ${JSON.stringify(badSubnet)}`);
  if (badGroup !== undefined) throw new ConfigError(`securityGroupIds must be security group ids (sg-0123456789abcdef0); got ${JSON.stringify(badGroup)}`);
  return { subnetIds, securityGroupIds };
}

function environment(env: Env): Record<string, string> {
  const value = envJson(env, 'functionEnvironment') ?? {};
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.values(value).every((v) => typeof v === 'string')) {
    throw new ConfigError('functionEnvironment must be a JSON object of strings, e.g. {"MAX_RETRIES":"8"}');
  }
  return value as Record<string, string>;
}

function list(value: string | undefined): string[] {
  return (value ?? '').split(',').map((item) => item.trim()).filter((item) => item !== '');
}

function textOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return value.join(',');
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export { CONTEXT_DEFAULTS, stackConfigFromContext };
export type { FunctionSizing, StackConfig };
