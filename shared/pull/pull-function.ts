import type { ChannelModel } from 'amqplib';
import { DEFAULTS, loadConfig, topologyOptionsFromConfig } from '../config/config.js';
import type { Handler } from '../message/message.js';
import { ConfigError, isNamedError } from '../errors.js';
import { checkDelayPath } from '../copy/delay-path-check.js';
import { createLambdaFunction, type FunctionOptions, type LambdaContext } from '../core/lambda-function.js';
import { runNativePull } from '../native/native-pull.js';
import type { InvocationOptions } from '../core/invocation.js';
import type { Summary } from '../observability/summary.js';
import { runPull } from './pull.js';

/** The part of the Lambda context the pull function reads. */
type PullContext = LambdaContext;

/**
 * Builds the scheduled pull function around a team's handler. Config is read once per container
 * (at the first invocation), and the delay path it needs is checked on the broker once per container
 * (again after a copy came back unroutable); the connection is opened and closed inside each
 * invocation, because a connection cached across a freeze dies of missed heartbeats. Each invocation
 * logs one summary line and writes its metrics, also when it fails (bad config, broker unreachable,
 * delay path missing), and then throws so that Lambda records the error. A native queue
 * (`delayMode: 'native'`) is served by native/native-pull.ts instead, which checks the work queue's
 * settings and the parking lot at the first invocation (until one succeeds).
 * @example export const handler = createPullFunction(myHandler);
 */
function createPullFunction(handler: Handler, given: FunctionOptions = {}) {
  // In the bundle of a queue whose code sets its delay mode (shared/cdk/bundles.ts defines the variable
  // at build time, 'native' or 'copy'), the path that mode never takes is folded away, and with it what
  // only that path loads (amqplib, or the native engine): the cold start does not load it. Anywhere else
  // ('any', or unset) both paths are here and the config chooses.
  // (Read in each condition, not through a variable: the bundler folds a condition, not a variable.)
  const runCopy = process.env.BOOMERANG_BUNDLED_DELAY_MODE === 'native' ? undefined : copyPathRunner();
  const runNative = process.env.BOOMERANG_BUNDLED_DELAY_MODE === 'copy' ? undefined : nativePathRunner();
  return createLambdaFunction<unknown, PullContext>(given, {
    defaultName: DEFAULTS.functionName,
    loadConfig: (env) => loadConfig(env, DEFAULTS.functionName),
    fields: (config) => ({ queue: config.workQueue }),
    async run({ config, budgetMs, log, metrics, idempotency, tracer, pacer }) {
      const options = { config, handler, budgetMs, log, metrics, idempotency, tracer, pacer };
      const run = config.delayMode === 'native' ? runNative : runCopy;
      if (run === undefined)
        throw new ConfigError(
          `delayMode '${config.delayMode}': this bundle was built for a queue whose code sets delayMode '${config.delayMode === 'native' ? 'tiers or exact' : 'native'}', and holds no other delay path. Build it again from the queue's definition (npm run build, cdk deploy)`,
        );
      return run(options);
    },
  });
}

/**
 * The native path's invocations (native/native-pull.ts): the work queue and the parking lot are checked
 * at the first invocation, and again after one that failed. rhea itself is loaded at the first native
 * connection (native/amqp10-attempt.ts).
 */
function nativePathRunner(): (options: InvocationOptions) => Promise<Summary> {
  let topologyChecked = false;
  return async (options) => {
    const summary = await runNativePull(options, { checkTopology: !topologyChecked });
    topologyChecked = true;
    return summary;
  };
}

/**
 * The copy path's invocations (tiers and exact): the delay path it needs is checked on the broker once
 * per container, and again after a copy came back unroutable.
 */
function copyPathRunner(): (options: InvocationOptions) => Promise<Summary> {
  let delayPathChecked = false;
  // Until a copy comes back unroutable although the check passed: then the marker is not believed.
  let trustMarker = true;
  return async (options) => {
    const beforeConsume = delayPathChecked
      ? undefined
      : async (connection: ChannelModel) => {
          await checkDelayPath(connection, topologyOptionsFromConfig(options.config), trustMarker);
          delayPathChecked = true;
        };
    try {
      return await runPull({ ...options, beforeConsume });
    } catch (error) {
      // A copy came back unroutable mid-run: check each destination next time, so that it fails at once.
      if (isNamedError(error, 'TopologyDriftError')) {
        if (delayPathChecked) trustMarker = false;
        delayPathChecked = false;
      }
      throw error;
    }
  };
}

export { createPullFunction };
export type { PullContext };
