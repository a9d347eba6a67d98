import { type Config, type ConfigInCode, loadConfig, NATIVE_EVENT_REFUSAL } from '../config/config.js';
import type { Env } from '../config/env.js';
import { type EnvOverride, envOverrides } from '../config/env-overrides.js';
import { createEventFunction } from '../event/event-function.js';
import { createPullFunction } from '../pull/pull-function.js';
import { ConfigError } from '../errors.js';
import { checkIdempotencyInCode } from '../idempotency/in-code.js';
import type { Handler } from '../message/message.js';
import { type Mode, type ResolvedDeploy, resolveDeploy } from './deploy-options.js';
import { type QueueOptions, splitOptions } from './queue-options.js';

/** What `defineQueue` checked and keeps: discovery, the stack, the bundles and the CLIs read it. */
type QueueDefinition = {
  readonly name: string;
  readonly workQueue: string;
  readonly handler: Handler;
  readonly options: QueueOptions;
  readonly deploy: ResolvedDeploy;
  /** The options given in code, as `loadConfig` takes them, `advanced` flattened (the local demo swaps the queues and the retry timing). */
  readonly code: ConfigInCode;
  /** One warning per option given at its old place (`tracing` for `advanced.tracing`), as `defineQueue` emitted them. */
  readonly deprecations: readonly string[];
  /** The function's config: the options in code first, then `env`, then the defaults. */
  readonly loadConfig: (env: Env, mode?: Mode) => Config;
  /** The variables set in `env` that the options in code replace, with both values (the CLIs print them). */
  readonly overrides: (env: Env) => EnvOverride[];
};

/** Marks a definition; `Symbol.for`, so that a definition made by a second copy of this module is still one. */
const DEFINITION = Symbol.for('boomerang.queue-definition');

const NAME = /^[a-z][a-z0-9-]{0,39}$/;

/**
 * Declares one queue: its handler, its options, how it is deployed. Checks every option given in code
 * at once (a typo fails at import: the build, the synth and the tests), and returns the definition with
 * the two Lambda handlers of the queue, whose config is read at their first invocation.
 * @example
 * export const { queue, pull, event } = defineQueue({
 *   name: 'orders',
 *   handler: async (message) => { await sendOrder(JSON.parse(message.body.toString())); },
 *   workQueue: 'orders',
 *   retry: { maxRetries: 8 },
 *   deploy: { modes: ['pull'], pull: { rateMinutes: 1 } },
 * });
 */
function defineQueue(options: QueueOptions) {
  const source = `defineQueue(${JSON.stringify(typeof options?.name === 'string' ? options.name : '?')})`;
  if (typeof options !== 'object' || options === null) throw new ConfigError(`defineQueue needs an options object; got ${JSON.stringify(options)}`);
  if (typeof options.name !== 'string' || !NAME.test(options.name)) {
    throw new ConfigError(
      `name in ${source} must be lower-case letters, digits and hyphens, starting with a letter, at most 40 characters (it names the functions); got ${JSON.stringify(options.name)}`,
    );
  }
  const { inCode, deprecations } = splitOptions(options, source);
  if (typeof options.handler !== 'function')
    throw new ConfigError(`handler in ${source} must be a function (message, context) => Promise<void>; got ${typeof options.handler}`);
  if (typeof options.workQueue !== 'string' || options.workQueue.trim() === '')
    throw new ConfigError(`workQueue in ${source} is required: the queue this handler consumes`);
  const { name, handler, deploy: deployOptions } = options;
  const code: ConfigInCode = { ...inCode, source };
  const idempotency = inCode.idempotency === undefined ? undefined : checkIdempotencyInCode(inCode.idempotency, source);
  const deploy = resolveDeploy(deployOptions, source, idempotency?.stackTable ?? false);
  const load = (env: Env, mode: Mode = 'pull'): Config => loadConfig(env, `boomerang-${name}-${mode}`, code);
  const overrides = (env: Env) => envOverrides(env, code);
  // Every option in code checked now, against an empty environment: the variables are read at the first
  // invocation (idempotency was checked above: its store may be one only the deployed environment names).
  const checked = loadConfig({}, `boomerang-${name}-pull`, { ...code, idempotency: undefined });
  if (checked.delayMode === 'native' && deploy.modes.includes('event')) throw new ConfigError(`${source}: ${NATIVE_EVENT_REFUSAL}`);
  for (const message of deprecations) process.emitWarning(message, { type: 'DeprecationWarning', code: 'BOOMERANG_DEPRECATED_OPTION' });
  const queue: QueueDefinition = Object.freeze({
    name,
    workQueue: checked.workQueue,
    handler,
    options: Object.freeze({ ...options }),
    deploy,
    code,
    deprecations,
    loadConfig: load,
    overrides,
    [DEFINITION]: true,
  });
  return {
    queue,
    // In a bundle for one mode, esbuild's `define` (shared/cdk/bundles.ts) writes that mode here at
    // build time: the other mode's function is never made, so its code stays out of the bundle and
    // out of each cold start. Anywhere else the variable is unset and both are made.
    /** The scheduled pull function of this queue (a Lambda handler). */
    pull:
      process.env.BOOMERANG_BUNDLED_MODE === 'event'
        ? leftOut<ReturnType<typeof createPullFunction>>(name, 'pull')
        : createPullFunction(handler, { loadConfig: (env) => load(env, 'pull'), overrides, defaultName: `boomerang-${name}-pull` }),
    /** The Amazon MQ event source function of this queue (a Lambda handler). */
    event:
      process.env.BOOMERANG_BUNDLED_MODE === 'pull'
        ? leftOut<ReturnType<typeof createEventFunction>>(name, 'event')
        : createEventFunction(handler, { loadConfig: (env) => load(env, 'event'), overrides, defaultName: `boomerang-${name}-event` }),
  };
}

/** The function of a mode a bundle was not built for: each call fails, naming the bundle's own mode. */
function leftOut<F extends (...args: never[]) => Promise<unknown>>(queue: string, mode: Mode): F {
  const fails = async (): Promise<never> => {
    throw new ConfigError(
      `the ${mode} function of queue '${queue}' is not in this bundle, which was built for the ${mode === 'pull' ? 'event' : 'pull'} mode only: deploy the ${mode} bundle (${queue}-${mode}) for it`,
    );
  };
  return fails as unknown as F;
}

/** Whether `value` is a definition made by `defineQueue`. */
function isQueueDefinition(value: unknown): value is QueueDefinition {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[DEFINITION] === true;
}

export { defineQueue, isQueueDefinition };
export type { QueueDefinition };
