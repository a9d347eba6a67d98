/**
 * The options of `defineQueue`: the everyday ones a team starting out meets, at the top level, and
 * the rest under `advanced`. An advanced option given at the top level, where it was before, is still
 * read for one release, with a warning naming its new place.
 */
import { closestHint } from '../config/did-you-mean.js';
import type { AdvancedOptions, ConfigInCode } from '../config/config-in-code.js';
import { OPTIONS, type OptionSpec } from '../config/option-table.js';
import { ConfigError } from '../errors.js';
import type { Handler } from '../message/message.js';
import type { DelayMode, QueueType } from '../topology/types.js';
import type { AckOrder, Tracing } from '../config/option-table.js';
import type { DeployOptions } from './deploy-options.js';

/** The advanced options that sat at the top level before; each still read there for one release. */
type DeprecatedOptions = {
  /** @deprecated Moved to `advanced.delayMode`; read here until the next release, with a warning. */
  readonly delayMode?: DelayMode;
  /** @deprecated Moved to `advanced.delayResolutionMs`; read here until the next release, with a warning. */
  readonly delayResolutionMs?: number;
  /** @deprecated Moved to `advanced.queueType`; read here until the next release, with a warning. */
  readonly queueType?: QueueType;
  /** @deprecated Moved to `advanced.ackOrder`; read here until the next release, with a warning. */
  readonly ackOrder?: AckOrder;
  /** @deprecated Moved to `advanced.maxMessages`; read here until the next release, with a warning. */
  readonly maxMessages?: number;
  /** @deprecated Moved to `advanced.tracing`; read here until the next release, with a warning. */
  readonly tracing?: Tracing;
};

/**
 * One queue of a team, as its file in functions/ declares it. Every option given here comes first;
 * those left out fall back to the environment variables, then to the defaults (`OPTIONS` in
 * shared/config/option-table.ts; docs/configuration.md). The broker connection (AMQP_URL, or the
 * stack's broker secret) belongs to where the function runs, not to the queue.
 */
type QueueOptions = Pick<ConfigInCode, 'parkingQueue' | 'retry' | 'rules' | 'batchSize' | 'concurrency' | 'idempotency' | 'rateLimit'> &
  DeprecatedOptions & {
    /**
     * The queue's name in Boomerang: `--function <name>` in the CLIs, `<stackName>-<name>-pull` in AWS.
     * Lower-case letters, digits and hyphens, starting with a letter, at most 40 characters.
     */
    readonly name: string;
    /** The team's handler: resolve to ack, throw to retry (`RetryableError`) or park (`UnrecoverableError`). */
    readonly handler: Handler;
    /** The queue the handler consumes (WORK_QUEUE). Required: two declared queues never share one. */
    readonly workQueue: string;
    /** How the stack deploys it. @default { modes: ['pull'] } */
    readonly deploy?: DeployOptions;
    /** What a team rarely needs: the delay mode, timeouts, the breaker, the crash-loop guard... (docs/configuration.md). */
    readonly advanced?: AdvancedOptions;
  };

const ROWS = Object.values(OPTIONS as Record<string, OptionSpec>);

/** The everyday keys of `defineQueue`, in the docs' order. */
const EVERYDAY_KEYS: readonly string[] = [
  'name',
  'handler',
  'workQueue',
  'parkingQueue',
  'retry',
  'rules',
  'batchSize',
  'concurrency',
  'idempotency',
  'rateLimit',
  'deploy',
];

/** The keys of `advanced`, from the option table. */
const ADVANCED_KEYS: readonly string[] = ROWS.flatMap((row) => (row.tier === 'advanced' && row.code !== undefined ? [row.code.slice('advanced.'.length)] : []));

/** Old top-level key -> its place now, from the option table. */
const MOVED: ReadonlyMap<string, string> = new Map(
  ROWS.flatMap((row) => (row.deprecated !== undefined && row.code !== undefined ? [[row.deprecated, row.code] as const] : [])),
);

/** The options in code, `advanced` flattened into `ConfigInCode`, and a warning for each option read at its old place. */
type SplitOptions = { readonly inCode: Omit<ConfigInCode, 'source'>; readonly deprecations: readonly string[] };

/**
 * Checks the keys of `options` and flattens `advanced` (pure); throws `ConfigError` naming an unknown
 * key, an advanced option at the top level, or an option given at both its old and its new place.
 * @example splitOptions({ name: 'orders', handler, workQueue: 'orders', tracing: 'xray' }, "defineQueue('orders')").deprecations
 * // ["tracing in defineQueue('orders') is deprecated: write advanced.tracing (the top-level key is read until the next release)"]
 */
function splitOptions(options: QueueOptions, source: string): SplitOptions {
  const given = options as unknown as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (EVERYDAY_KEYS.includes(key) || key === 'advanced' || MOVED.has(key)) continue;
    if (ADVANCED_KEYS.includes(key)) throw new ConfigError(`${key} in ${source} is an advanced option: write it as advanced: { ${key}: ... }`);
    const known = [...EVERYDAY_KEYS, 'advanced'];
    throw new ConfigError(`Unknown option ${key} in ${source}${closestHint(key, known)}; expected one of ${known.join(', ')}`);
  }
  const advanced = given.advanced ?? {};
  if (typeof advanced !== 'object' || advanced === null || Array.isArray(advanced))
    throw new ConfigError(`advanced in ${source} must be an object; got ${JSON.stringify(advanced)}`);
  const unknown = Object.keys(advanced).find((key) => !ADVANCED_KEYS.includes(key));
  if (unknown !== undefined)
    throw new ConfigError(`Unknown option advanced.${unknown} in ${source}${closestHint(unknown, ADVANCED_KEYS)}; expected one of ${ADVANCED_KEYS.join(', ')}`);
  const deprecations = [...MOVED].flatMap(([old, now]) => {
    if (given[old] === undefined) return [];
    if ((advanced as Record<string, unknown>)[old] !== undefined)
      throw new ConfigError(`${old} in ${source} is given twice: remove the top-level ${old}, keep ${now}`);
    return [`${old} in ${source} is deprecated: write ${now} (the top-level key is read until the next release)`];
  });
  // The old top-level keys stay in `everyday`: ConfigInCode is flat, so they land where `advanced` would put them.
  const { name: _name, handler: _handler, deploy: _deploy, advanced: _advanced, ...everyday } = given;
  return { inCode: { ...everyday, ...advanced } as Omit<ConfigInCode, 'source'>, deprecations };
}

export { EVERYDAY_KEYS, splitOptions };
export type { QueueOptions };
