/**
 * The props of `BoomerangQueues`, each documented with its default, and their check: the construct
 * validates them all before it reads a definition or makes a resource, throwing `ConfigError` naming
 * the prop. A CDK app that reads some of them from its context checks them the same way first
 * (`checkSettings`), naming its context keys instead.
 */
import { Token } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { ConfigError } from '../errors.js';
import { type BrokerLabels, type BrokerOptions, type CreateBrokerOptions, resolveBrokerOptions } from './broker-options.js';
import { COMPLETE_SECRET_ARN } from './function-environment.js';
import { checkNetwork, type Network, type NetworkLabels } from './network.js';

type BoomerangQueuesProps = {
  /**
   * The folder of the queue files: every file there exporting `queue` made by `defineQueue` (`.ts`,
   * `.mts`, `.js`, `.mjs`; tests and declarations skipped), as Boomerang's discovery reads it. Relative
   * to the working directory. Not with `files`.
   * @default BOOMERANG_FUNCTIONS_DIR, else `functions/` in the working directory
   */
  readonly functionsDir?: string;
  /** The queue files, instead of a folder: each exports `queue` made by `defineQueue`. @default every file of `functionsDir` */
  readonly files?: readonly string[];
  /**
   * The Secrets Manager secret of the broker user, `{"username", "password"}`: its complete ARN (with the
   * six characters Secrets Manager adds to the name), or an `ISecret` that knows it. The functions and
   * the event source mappings read it; a created broker takes its user from it.
   */
  readonly brokerSecret: string | ISecret;
  /** The broker's AMQPS host name, without scheme or port (`b-1234….mq.eu-west-1.amazonaws.com`). Required unless `createBroker`. */
  readonly brokerHost?: string;
  /** The broker's ARN: required when a queue deploys its event function (its event source mapping reads it). @default none */
  readonly brokerArn?: string;
  /** Create a single-instance Amazon MQ for RabbitMQ broker, instead of `brokerHost` and `brokerArn`. @default none: an existing broker */
  readonly createBroker?: CreateBrokerOptions;
  /** Run the functions (and a created broker) in these subnets and security groups: a private broker needs them. @default none: no VPC */
  readonly network?: Network;
  /** How long the functions' log groups keep their logs. @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /** The SNS topic every alarm notifies. @default none */
  readonly alarmTopic?: ITopic;
  /**
   * More environment variables for every function (`HTTP_TIMEOUT_MS`, `LOG_LEVEL`…), checked for each
   * queue by its functions' own parsers; an option in a queue's file wins over them. @default {}
   */
  readonly functionEnvironment?: Readonly<Record<string, string>>;
  /** The first part of the function names, `<prefix>-<queue>-<mode>`. @default the stack's name */
  readonly functionNamePrefix?: string;
};

/** The settings a CDK app may take from its context, checked alike whoever gives them. */
type Settings = Pick<BoomerangQueuesProps, 'createBroker' | 'network' | 'logRetention' | 'functionEnvironment'>;

type ResolvedSettings = {
  readonly broker: BrokerOptions | undefined;
  readonly network: Network | undefined;
  readonly logRetention: RetentionDays;
  readonly functionEnvironment: Readonly<Record<string, string>>;
};

/** How the caller names each setting in its errors. */
type SettingLabels = BrokerLabels & NetworkLabels & { readonly logRetention: string };

/** The props' own names. */
const PROP_LABELS: SettingLabels = {
  instanceType: 'createBroker.instanceType',
  engineVersion: 'createBroker.engineVersion',
  subnetIds: 'network.subnetIds',
  securityGroupIds: 'network.securityGroupIds',
  logRetention: 'logRetention',
};

const DEFAULT_LOG_RETENTION = RetentionDays.ONE_MONTH;

const BROKER_HOST = /^[A-Za-z0-9.-]+$/;
const BROKER_ARN = /^arn:aws[a-z-]*:mq:[a-z0-9-]+:[0-9]{12}:broker:.+$/;
/** Lambda's function names: letters, digits, hyphens and underscores. */
const NAME_PREFIX = /^[A-Za-z0-9_-]+$/;

/**
 * Applies the defaults to the settings and checks them; throws `ConfigError` naming the first bad one
 * as `labels` call it.
 * @example checkSettings({ logRetention: 14 }, { ...PROP_LABELS, logRetention: 'logRetentionDays' })
 */
function checkSettings(settings: Settings, labels: SettingLabels = PROP_LABELS): ResolvedSettings {
  const logRetention = settings.logRetention ?? DEFAULT_LOG_RETENTION;
  if (!(Object.values(RetentionDays) as unknown[]).includes(logRetention)) {
    throw new ConfigError(
      `${labels.logRetention} must be one of CloudWatch's retention periods (1, 3, 5, 7, 14, 30, 60, 90, ...); got ${JSON.stringify(logRetention)}`,
    );
  }
  const environment = settings.functionEnvironment ?? {};
  if (
    typeof environment !== 'object' ||
    environment === null ||
    Array.isArray(environment) ||
    !Object.values(environment).every((v) => typeof v === 'string')
  ) {
    throw new ConfigError('functionEnvironment must be an object of strings, e.g. {"MAX_RETRIES":"8"}');
  }
  return {
    broker: settings.createBroker === undefined ? undefined : resolveBrokerOptions(settings.createBroker, labels),
    network: settings.network === undefined ? undefined : checkNetwork(settings.network, labels),
    logRetention,
    functionEnvironment: { ...environment },
  };
}

/** Throws `ConfigError` when `value` is a string, not a token, that `pattern` refuses. */
function checkText(name: string, value: string | undefined, pattern: RegExp, what: string): void {
  if (value === undefined || Token.isUnresolved(value) || pattern.test(value)) return;
  throw new ConfigError(`${name} must be ${what}; got ${JSON.stringify(value)}`);
}

/**
 * Every prop checked: where the queues come from, the broker (an existing one by host, and ARN when
 * known, or one to create), the settings. Tokens (CloudFormation parameters, references) pass as
 * they are. Throws `ConfigError` naming the prop.
 */
function checkProps(props: BoomerangQueuesProps): ResolvedSettings & { readonly secretArn: string } {
  if (props.functionsDir !== undefined && props.files !== undefined)
    throw new ConfigError('functionsDir and files are two ways to name the queue files: give one of them');
  if (props.files !== undefined && (!Array.isArray(props.files) || props.files.length === 0 || !props.files.every((f) => typeof f === 'string'))) {
    throw new ConfigError('files must be a non-empty list of queue files (paths, each exporting `queue` made by defineQueue)');
  }
  const secret = props.brokerSecret;
  if (secret === undefined || secret === null)
    throw new ConfigError('brokerSecret is required: the complete ARN (or an ISecret) of the Secrets Manager secret of the broker user');
  const secretArn = typeof secret === 'string' ? secret : secret.secretFullArn;
  if (secretArn === undefined) {
    throw new ConfigError(
      'brokerSecret must know its complete ARN (the event source mappings and the grants need it): import it with Secret.fromSecretCompleteArn, not by name or partial ARN',
    );
  }
  checkText('brokerSecret', secretArn, COMPLETE_SECRET_ARN, "the secret's complete ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>-AbCdEf)");
  if (props.createBroker !== undefined) {
    const given = (['brokerHost', 'brokerArn'] as const).find((key) => props[key] !== undefined);
    if (given !== undefined)
      throw new ConfigError(
        `${given} is set, but createBroker makes the broker, which gives its own: remove ${given}, or createBroker to use an existing broker`,
      );
  } else if (typeof props.brokerHost !== 'string' || props.brokerHost === '') {
    throw new ConfigError("brokerHost is required (the broker's AMQPS host name), unless createBroker makes one");
  }
  checkText('brokerHost', props.brokerHost, BROKER_HOST, "the broker's host name, without scheme or port (b-1234....mq.<region>.amazonaws.com)");
  checkText('brokerArn', props.brokerArn, BROKER_ARN, 'an Amazon MQ broker ARN (arn:aws:mq:<region>:<account>:broker:<name>:b-...)');
  checkText('functionNamePrefix', props.functionNamePrefix, NAME_PREFIX, 'letters, digits, hyphens and underscores (Lambda function names)');
  return { ...checkSettings(props), secretArn };
}

export { checkProps, checkSettings, PROP_LABELS };
export type { BoomerangQueuesProps, ResolvedSettings, Settings };
