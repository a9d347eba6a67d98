import { DEFAULTS, loadConfig, topologyOptionsFromConfig, type Config } from '../config/config.js';
import type { Handler } from '../message/message.js';
import { runPull } from './pull.js';
import { createReporter, reportInvocation, type FunctionOptions } from '../observability/report-invocation.js';
import type { Summary } from './summary.js';
import { checkDelayPath } from '../topology/delay-path-check.js';

/** The part of the Lambda context the pull function reads. */
type PullContext = {
  getRemainingTimeInMillis(): number;
  readonly awsRequestId: string;
};

/**
 * Builds the scheduled pull function around a team's handler. Config is read once per container
 * (at the first invocation), and the delay path it needs is checked on the broker once per container
 * (again after a copy came back unroutable); the connection is opened and closed inside each
 * invocation, because a connection cached across a freeze dies of missed heartbeats. Each invocation
 * logs one summary line and writes its metrics, also when it fails (bad config, broker unreachable,
 * delay path missing), and then throws so that Lambda records the error.
 * @example export const handler = createPullFunction(myHandler);
 */
function createPullFunction(handler: Handler, given: FunctionOptions = {}) {
  const reporter = createReporter(given, DEFAULTS.functionName);
  let config: Config | undefined = given.config;
  let delayPathChecked = false;
  return async (_event: unknown, context: PullContext): Promise<Summary> => {
    const report = reporter.start(context.awsRequestId, () => ({ queue: config?.workQueue }));
    return reportInvocation(report, async () => {
      const current = (config ??= (given.loadConfig ?? ((env) => loadConfig(env, DEFAULTS.functionName)))(reporter.env));
      const beforeConsume = delayPathChecked ? undefined : async (connection: Parameters<typeof checkDelayPath>[0]) => {
        await checkDelayPath(connection, topologyOptionsFromConfig(current));
        delayPathChecked = true;
      };
      try {
        return await runPull({ config: current, handler, budgetMs: context.getRemainingTimeInMillis(), log: report.log.child({ queue: current.workQueue }), metrics: report.metrics, beforeConsume });
      } catch (error) {
        // A copy came back unroutable mid-run: check again next time, so that it fails at once.
        if ((error as Error).name === 'TopologyDriftError') delayPathChecked = false;
        throw error;
      }
    });
  };
}

export { createPullFunction };
export type { PullContext };
