/**
 * The engine and host instance of a broker the construct creates, checked against what Amazon MQ for
 * RabbitMQ offers: engine 3.13 runs on mq.t3, mq.m5 and mq.m7g; engines 4.2 and 4.3 on mq.m7g only.
 */
import { envChoice } from '../config/env.js';
import { ConfigError } from '../errors.js';

/** The RabbitMQ engine versions Amazon MQ offers. An existing broker upgrades one step at a time: 3.13 → 4.2 → 4.3. */
const ENGINE_VERSIONS = ['3.13', '4.2', '4.3'] as const;

type EngineVersion = (typeof ENGINE_VERSIONS)[number];

/** The host instance families each engine runs on. */
const INSTANCE_FAMILIES: Readonly<Record<EngineVersion, readonly string[]>> = {
  '3.13': ['mq.t3', 'mq.m5', 'mq.m7g'],
  '4.2': ['mq.m7g'],
  '4.3': ['mq.m7g'],
};

/** A broker for the construct to create: a single-instance Amazon MQ for RabbitMQ broker. */
type CreateBrokerOptions = {
  /** The host instance type; engines 4.2 and 4.3 need an mq.m7g host. @default 'mq.t3.micro' (the cheapest; it runs 3.13 only) */
  readonly instanceType?: string;
  /** The RabbitMQ engine. Amazon MQ upgrades a broker one step at a time: change it one step per deploy. @default '3.13' */
  readonly engineVersion?: EngineVersion;
};

/** The created broker, checked. */
type BrokerOptions = { readonly kind: 'create'; readonly instanceType: string; readonly engineVersion: EngineVersion };

const BROKER_DEFAULTS = {
  instanceType: 'mq.t3.micro',
  engineVersion: '3.13',
} as const;

/** How the caller names the two settings in its errors: the construct's props, or a CDK app's context keys. */
type BrokerLabels = { readonly instanceType: string; readonly engineVersion: string };

/**
 * Applies the defaults and throws `ConfigError` naming the setting when the engine is not one Amazon MQ
 * offers or does not run on that instance family, saying which one it needs.
 * @example resolveBrokerOptions({ engineVersion: '4.3', instanceType: 'mq.m7g.medium' }, { instanceType: 'createBroker.instanceType', engineVersion: 'createBroker.engineVersion' })
 */
function resolveBrokerOptions(options: CreateBrokerOptions, labels: BrokerLabels): BrokerOptions {
  const engineVersion = envChoice({ [labels.engineVersion]: options.engineVersion }, labels.engineVersion, ENGINE_VERSIONS, BROKER_DEFAULTS.engineVersion);
  const instanceType = options.instanceType ?? BROKER_DEFAULTS.instanceType;
  const family = /^mq\.[a-z0-9]+(?=\.[a-z0-9]+$)/.exec(instanceType)?.[0];
  if (family === undefined)
    throw new ConfigError(`${labels.instanceType} must be an Amazon MQ host instance type such as mq.m7g.medium; got ${JSON.stringify(instanceType)}`);
  const families = INSTANCE_FAMILIES[engineVersion];
  if (!families.includes(family)) {
    const given = options.instanceType === undefined ? ` (the default ${labels.instanceType})` : '';
    throw new ConfigError(
      `${labels.instanceType} ${instanceType}${given} cannot run ${labels.engineVersion} ${engineVersion}: Amazon MQ runs RabbitMQ ${engineVersion} on ${families.join(', ')} hosts only. ` +
        `Set ${labels.instanceType} to one of those (for example ${families[0]}.medium), or choose another ${labels.engineVersion} (${ENGINE_VERSIONS.filter((v) => INSTANCE_FAMILIES[v].includes(family)).join(', ') || 'none runs on it'}).`,
    );
  }
  return { kind: 'create', instanceType, engineVersion };
}

export { ENGINE_VERSIONS, resolveBrokerOptions };
export type { BrokerLabels, BrokerOptions, CreateBrokerOptions, EngineVersion };
