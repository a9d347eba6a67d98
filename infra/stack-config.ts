/**
 * The deploy-time choices of the example app's stack that come from CDK context (`cdk deploy -c
 * key=value`, or a `context` object): the stack-wide settings of the construct. Each queue's own come
 * from its `deploy` in functions/<name>.ts, which the construct reads. Values that differ per account (the
 * secret's ARN, the broker's ARN and host) are CloudFormation parameters instead, so synth needs none of them.
 */
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type Settings, checkSettings, PROP_LABELS } from '../shared/cdk/boomerang-queues-props.js';
import type { EngineVersion } from '../shared/cdk/broker-options.js';
import { envChoice, envInt, envJson, envString, type Env } from '../shared/config/env.js';
import { ConfigError } from '../shared/errors.js';
import { checkContextKeys, type ContextKey } from './context-keys.js';

/** Everything the stack reads from context, checked as the construct will check it; see `CONTEXT_DEFAULTS` for the defaults. */
type StackConfig = Settings & {
  readonly logRetention: RetentionDays;
  /** An SNS topic ARN the alarms notify; none when undefined. */
  readonly alarmTopicArn: string | undefined;
  readonly functionEnvironment: Readonly<Record<string, string>>;
};

/** The context keys and their defaults (a key missing here is required or optional without default). */
const CONTEXT_DEFAULTS = {
  logRetentionDays: 30,
} as const;

/** The construct's settings as the context names them, for the errors. */
const CONTEXT_LABELS = {
  ...PROP_LABELS,
  instanceType: 'brokerInstanceType',
  engineVersion: 'brokerEngineVersion',
  subnetIds: 'subnetIds',
  securityGroupIds: 'securityGroupIds',
  logRetention: 'logRetentionDays',
};

/**
 * Reads and checks the whole context (`app.node.getAllContext()`); throws `ConfigError` naming the
 * first bad key: an unknown key (a per-queue key names where it lives now), a bad value, a broker key
 * without createBroker. The queues themselves, and functionEnvironment against each of them, are the
 * construct's to check.
 * @example stackConfigFromContext(app.node.getAllContext())
 */
function stackConfigFromContext(context: Readonly<Record<string, unknown>>): StackConfig {
  checkContextKeys(context);
  // Context values are strings from `-c`, or JSON values from cdk.json: read both as text.
  const env: Env = Object.fromEntries(Object.entries(context).map(([key, value]) => [key, textOf(value)]));
  const createBroker = envChoice(env, 'createBroker', ['true', 'false'], 'false') === 'true';
  refuseUnused(env, (key) => (key.startsWith('broker') && !createBroker ? 'the stack creates no broker (createBroker=true does)' : undefined));
  const subnetIds = list(envString(env, 'subnetIds'));
  const securityGroupIds = list(envString(env, 'securityGroupIds'));
  const config: StackConfig = {
    logRetention: envInt(env, 'logRetentionDays', CONTEXT_DEFAULTS.logRetentionDays, 1, 3653) as RetentionDays,
    alarmTopicArn: envString(env, 'alarmTopicArn'),
    createBroker: createBroker
      ? { instanceType: envString(env, 'brokerInstanceType'), engineVersion: envString(env, 'brokerEngineVersion') as EngineVersion | undefined }
      : undefined,
    network: subnetIds.length === 0 && securityGroupIds.length === 0 ? undefined : { subnetIds, securityGroupIds },
    functionEnvironment: functionEnvironmentOf(env),
  };
  checkSettings(config, CONTEXT_LABELS);
  return config;
}

/** Throws for the first key set although `why(key)` says the stack will not use it. */
function refuseUnused(env: Env, why: (key: ContextKey) => string | undefined): void {
  for (const key of Object.keys(env) as ContextKey[]) {
    const reason = envString(env, key) === undefined ? undefined : why(key);
    if (reason !== undefined) throw new ConfigError(`${key} is set, but ${reason}: remove it, or deploy what it configures`);
  }
}

function functionEnvironmentOf(env: Env): Record<string, string> {
  const value = envJson(env, 'functionEnvironment') ?? {};
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.values(value).every((v) => typeof v === 'string')) {
    throw new ConfigError('functionEnvironment must be a JSON object of strings, e.g. {"MAX_RETRIES":"8"}');
  }
  return value as Record<string, string>;
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function textOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return value.join(',');
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export { stackConfigFromContext };
export type { StackConfig };
