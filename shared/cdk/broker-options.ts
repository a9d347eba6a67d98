/**
 * The engine and host instance of a broker the stack creates, checked against what Amazon MQ for
 * RabbitMQ offers: engine 3.13 runs on mq.t3, mq.m5 and mq.m7g; engines 4.2 and 4.3 on mq.m7g only.
 */
import { type Env, envChoice, envString } from '../config/env.js';
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

/** The created broker; see `BROKER_DEFAULTS`. */
type BrokerOptions = { readonly kind: 'create'; readonly instanceType: string; readonly engineVersion: EngineVersion };

const BROKER_DEFAULTS = {
  /** The cheapest host; it runs engine 3.13 only. */
  instanceType: 'mq.t3.micro',
  engineVersion: '3.13',
} as const;

/**
 * Reads `brokerEngineVersion` and `brokerInstanceType`; throws `ConfigError` naming the key when the
 * engine does not run on that instance family, and saying which one it needs.
 * @example brokerOptions({ brokerEngineVersion: '4.3', brokerInstanceType: 'mq.m7g.medium' })
 */
function brokerOptions(env: Env): BrokerOptions {
  const engineVersion = envChoice(env, 'brokerEngineVersion', ENGINE_VERSIONS, BROKER_DEFAULTS.engineVersion);
  const instanceType = envString(env, 'brokerInstanceType') ?? BROKER_DEFAULTS.instanceType;
  const family = /^mq\.[a-z0-9]+(?=\.[a-z0-9]+$)/.exec(instanceType)?.[0];
  if (family === undefined) throw new ConfigError(`brokerInstanceType must be an Amazon MQ host instance type such as mq.m7g.medium; got ${JSON.stringify(instanceType)}`);
  const families = INSTANCE_FAMILIES[engineVersion];
  if (!families.includes(family)) {
    const given = envString(env, 'brokerInstanceType') === undefined ? ' (the default brokerInstanceType)' : '';
    throw new ConfigError(
      `brokerInstanceType ${instanceType}${given} cannot run brokerEngineVersion ${engineVersion}: Amazon MQ runs RabbitMQ ${engineVersion} on ${families.join(', ')} hosts only. ` +
        `Set brokerInstanceType to one of those (for example ${families[0]}.medium), or choose another brokerEngineVersion (${ENGINE_VERSIONS.filter((v) => INSTANCE_FAMILIES[v].includes(family)).join(', ') || 'none runs on it'}).`,
    );
  }
  return { kind: 'create', instanceType, engineVersion };
}

export { brokerOptions };
export type { BrokerOptions, EngineVersion };
