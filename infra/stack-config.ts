/**
 * The deploy-time choices of the Boomerang stack: the stack-wide ones from CDK context (`cdk deploy -c
 * key=value`, or a `context` object), each queue's from its `deploy` in functions/<name>.ts. Values that differ per account (the secret's
 * ARN, the broker's ARN and host) are CloudFormation parameters instead, so synth needs none of them.
 */
import { relative } from 'node:path';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { envChoice, envInt, envJson, envString, type Env } from '../shared/config/env.js';
import type { DeclaredQueue } from '../shared/queues/declared-queues.js';
import { formatOverrides } from '../shared/config/env-overrides.js';
import type { DeployedQueue, Network } from '../shared/cdk/deployed-queue.js';
import { ConfigError } from '../shared/errors.js';
import { type BrokerOptions, brokerOptions } from '../shared/cdk/broker-options.js';
import { checkContextKeys, type ContextKey } from './context-keys.js';
import { checkFunctionEnvironment } from '../shared/cdk/function-environment.js';

/** Everything the stack reads from context and the declared queues, validated; see `CONTEXT_DEFAULTS` for the defaults. */
type StackConfig = {
  /** Every declared queue, in the order of their files. */
  readonly queues: readonly DeployedQueue[];
  readonly logRetentionDays: RetentionDays;
  /** An SNS topic ARN the alarms notify; none when undefined. */
  readonly alarmTopicArn: string | undefined;
  /** `create`: the stack creates a single-instance Amazon MQ for RabbitMQ broker. */
  readonly broker: { readonly kind: 'existing' } | BrokerOptions;
  /** Subnets and security groups for the functions (and a created broker): a private broker needs them. */
  readonly network: Network | undefined;
  /** More environment variables for every function (HTTP_TIMEOUT_MS, PARTNER_API_URL, LOG_LEVEL...). */
  readonly environment: Readonly<Record<string, string>>;
};

/** The context keys and their defaults (a key missing here is required or optional without default). */
const CONTEXT_DEFAULTS = {
  logRetentionDays: 30,
} as const;

/**
 * Reads and checks the whole context (`app.node.getAllContext()`) and the declared queues; throws
 * `ConfigError` naming the first bad key or queue: an unknown key (a per-queue key names where it
 * lives now), a bad value, a broker key without createBroker, or a function variable the functions
 * themselves would refuse.
 * @example stackConfigFromContext(app.node.getAllContext(), await loadDeclaredQueues())
 */
function stackConfigFromContext(context: Readonly<Record<string, unknown>>, queues: readonly DeclaredQueue[]): StackConfig {
  checkContextKeys(context);
  // Context values are strings from `-c`, or JSON values from cdk.json: read both as text.
  const env: Env = Object.fromEntries(Object.entries(context).map(([key, value]) => [key, textOf(value)]));
  const retention = envInt(env, 'logRetentionDays', CONTEXT_DEFAULTS.logRetentionDays, 1, 3653);
  if (!(Object.values(RetentionDays) as unknown[]).includes(retention)) {
    throw new ConfigError(`logRetentionDays must be one of CloudWatch's retention periods (1, 3, 5, 7, 14, 30, 60, 90, ...); got ${retention}`);
  }
  const createBroker = envChoice(env, 'createBroker', ['true', 'false'], 'false') === 'true';
  refuseUnused(env, (key) => (key.startsWith('broker') && !createBroker ? 'the stack creates no broker (createBroker=true does)' : undefined));
  if (queues.length === 0) throw new ConfigError('No queue is declared: add a file to functions/ that exports `queue` made by defineQueue');
  const environment = functionEnvironmentOf(env);
  return {
    queues: queues.map((queue) => ({
      name: queue.name,
      workQueue: queue.workQueue,
      file: relative(process.cwd(), queue.file) || queue.file,
      path: queue.file,
      deploy: queue.deploy,
      ...checkFunctionEnvironment(queue, environment),
      overrides: formatOverrides(queue.overrides(environment)),
    })),
    logRetentionDays: retention as RetentionDays,
    alarmTopicArn: envString(env, 'alarmTopicArn'),
    broker: createBroker ? brokerOptions(env) : { kind: 'existing' },
    network: network(env),
    environment,
  };
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

export { stackConfigFromContext };
export type { StackConfig };
