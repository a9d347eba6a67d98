/**
 * The deploy-time choices of the Boomerang stack, read from CDK context (`cdk deploy -c key=value`, or
 * a `context` object): shapes and sizes known at synth. Values that differ per account (the secret's
 * ARN, the broker's ARN and host) are CloudFormation parameters instead, so synth needs none of them.
 */
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { envChoice, envInt, envJson, envString, type Env } from '../shared/config/env.js';
import { ConfigError } from '../shared/errors.js';
import { type BrokerOptions, brokerOptions } from './broker-options.js';
import { checkContextKeys, type ContextKey } from './context-keys.js';
import { checkFunctionEnvironment, type FunctionTimings } from './function-environment.js';

/** Timeout and memory of one function. */
type FunctionSizing = { readonly timeoutSeconds: number; readonly memoryMb: number };

/** How a queue is served: `pull`, the scheduled function; `event`, the event source mapping and its function. */
type Mode = 'pull' | 'event';

const MODES: readonly Mode[] = ['pull', 'event'];

/**
 * One queue and how it is served. A stack serves one queue today; the fields stay together so that a
 * list of queues can later hold one of these per entry.
 */
type QueueConfig = {
  /** WORK_QUEUE of the functions, and the queue the event source mapping consumes. */
  readonly workQueue: string;
  /** PARKING_QUEUE; undefined leaves the function's default (`<workQueue>.parked`). */
  readonly parkingQueue: string | undefined;
  /** The vhost of the queue: the mapping's VIRTUAL_HOST and the functions' AMQP_VHOST. */
  readonly virtualHost: string;
  /** The functions that serve it; both only when acknowledged, because they then compete for its messages. */
  readonly modes: readonly Mode[];
};

/** Everything the stack reads from context, validated; see `CONTEXT_DEFAULTS` for the defaults. */
type StackConfig = {
  readonly queue: QueueConfig;
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
  readonly broker: { readonly kind: 'existing' } | BrokerOptions;
  /** Subnets and security groups for the functions (and a created broker): a private broker needs them. */
  readonly network: { readonly subnetIds: readonly string[]; readonly securityGroupIds: readonly string[] } | undefined;
  /** More environment variables for the functions (MAX_RETRIES, BACKOFF_*, RETRY_RULES, DELAY_MODE...). */
  readonly environment: Readonly<Record<string, string>>;
  /** What the functions read from that environment about time, for the synth's timeout warnings. */
  readonly timings: FunctionTimings;
};

/** The context keys and their defaults (a key missing here is required or optional without default). */
const CONTEXT_DEFAULTS = {
  workQueue: 'boomerang.work',
  virtualHost: '/',
  modes: 'pull',
  pullRateMinutes: 1,
  pullReservedConcurrency: 1,
  pullTimeoutSeconds: 60,
  pullMemoryMb: 256,
  eventTimeoutSeconds: 60,
  eventMemoryMb: 256,
  eventBatchSize: 100,
  logRetentionDays: 30,
} as const;

/**
 * Reads and checks the whole context (`app.node.getAllContext()`); throws `ConfigError` naming the
 * first bad key: an unknown one, a bad value, a key for a function or broker the stack does not deploy,
 * or a function variable the functions themselves would refuse.
 * @example stackConfigFromContext(app.node.getAllContext())
 */
function stackConfigFromContext(context: Readonly<Record<string, unknown>>): StackConfig {
  checkContextKeys(context);
  // Context values are strings from `-c`, or JSON values from cdk.json: read both as text.
  const env: Env = Object.fromEntries(Object.entries(context).map(([key, value]) => [key, textOf(value)]));
  const d = CONTEXT_DEFAULTS;
  const retention = envInt(env, 'logRetentionDays', d.logRetentionDays, 1, 3653);
  if (!(Object.values(RetentionDays) as unknown[]).includes(retention)) {
    throw new ConfigError(`logRetentionDays must be one of CloudWatch's retention periods (1, 3, 5, 7, 14, 30, 60, 90, ...); got ${retention}`);
  }
  const windowSeconds = envString(env, 'eventBatchWindowSeconds');
  const createBroker = envChoice(env, 'createBroker', ['true', 'false'], 'false') === 'true';
  const queue = { workQueue: envString(env, 'workQueue') ?? d.workQueue, parkingQueue: envString(env, 'parkingQueue'), virtualHost: envString(env, 'virtualHost') ?? d.virtualHost };
  const modes = readModes(env, queue.workQueue);
  refuseUnused(env, (key) => (key.startsWith('pull') && !modes.includes('pull') ? 'modes does not include pull' : undefined));
  refuseUnused(env, (key) => (key.startsWith('event') && !modes.includes('event') ? 'modes does not include event' : undefined));
  refuseUnused(env, (key) => (key.startsWith('broker') && !createBroker ? 'the stack creates no broker (createBroker=true does)' : undefined));
  const environment = functionEnvironmentOf(env);
  return {
    queue: { ...queue, modes },
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
    broker: createBroker ? brokerOptions(env) : { kind: 'existing' },
    network: network(env),
    environment,
    timings: checkFunctionEnvironment(queue, environment),
  };
}

/** `modes`: `pull`, `event`, or both (comma-separated, or a JSON array in cdk.json) with the acknowledgement. */
function readModes(env: Env, workQueue: string): Mode[] {
  const given = list(envString(env, 'modes') ?? CONTEXT_DEFAULTS.modes);
  const bad = given.find((mode) => !(MODES as readonly string[]).includes(mode));
  if (bad !== undefined || given.length === 0) throw new ConfigError(`modes must be pull, event, or pull,event; got ${JSON.stringify(envString(env, 'modes'))}`);
  const modes = MODES.filter((mode) => given.includes(mode));
  const acknowledged = envChoice(env, 'acknowledgeCompetingModes', ['true', 'false'], 'false') === 'true';
  if (modes.length === 2 && !acknowledged) {
    throw new ConfigError(
      `modes=pull,event deploys both functions on ${JSON.stringify(workQueue)}, and they compete for its messages: each message goes to one of them ` +
        '(per-message acks for pull, whole-batch redelivery for event). Choose one (modes=pull or modes=event), or set acknowledgeCompetingModes=true to deploy both anyway.',
    );
  }
  if (modes.length < 2 && envString(env, 'acknowledgeCompetingModes') !== undefined) {
    throw new ConfigError(`acknowledgeCompetingModes applies only with modes=pull,event; modes is ${modes.join(',')}: remove it`);
  }
  return modes;
}

/** Throws for the first key set although `why(key)` says the stack will not use it. */
function refuseUnused(env: Env, why: (key: ContextKey) => string | undefined): void {
  for (const key of Object.keys(env) as ContextKey[]) {
    const reason = envString(env, key) === undefined ? undefined : why(key);
    if (reason !== undefined) throw new ConfigError(`${key} is set, but ${reason}: remove it, or deploy what it configures`);
  }
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

function functionEnvironmentOf(env: Env): Record<string, string> {
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

export { CONTEXT_DEFAULTS, MODES, stackConfigFromContext };
export type { FunctionSizing, Mode, QueueConfig, StackConfig };
