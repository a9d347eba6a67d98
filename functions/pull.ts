import { loadConfig, type Config } from '../shared/config.js';
import { createLogger, logLevelFrom, type Logger } from '../shared/logger.js';
import type { Handler } from '../shared/message.js';
import { EmfMetrics, noMetrics, type InvocationMetrics } from '../shared/metrics.js';
import { PullAbortedError, runPull } from '../shared/pull.js';
import type { Summary } from '../shared/summary.js';
import { handle as deliverWebhook } from './webhook-delivery.js';

/** The part of the Lambda context the pull function reads. */
type PullContext = {
  getRemainingTimeInMillis(): number;
  readonly awsRequestId: string;
};

/** Metrics for one invocation: EMF on stdout inside Lambda, none elsewhere (stdout is the CLI's). */
function defaultMetrics(config: Config): InvocationMetrics {
  return process.env.AWS_LAMBDA_FUNCTION_NAME ? new EmfMetrics({ service: config.functionName }) : noMetrics;
}

/**
 * Builds the scheduled pull function around a team's handler. Config is read once per container
 * (at the first invocation); the connection is opened and closed inside each invocation, because a
 * connection cached across a freeze dies of missed heartbeats. Each invocation logs one summary line
 * and writes its metrics, also when it ends early.
 * @example export const handler = createPullFunction(myHandler);
 */
function createPullFunction(handler: Handler, given?: { config?: Config; log?: Logger; metrics?: (config: Config) => InvocationMetrics }) {
  let config = given?.config;
  const log = given?.log ?? createLogger({ level: logLevelFrom(process.env.LOG_LEVEL) });
  let coldStart = true;
  return async (_event: unknown, context: PullContext): Promise<Summary> => {
    config ??= loadConfig();
    const requestLog = log.child({ requestId: context.awsRequestId, queue: config.workQueue });
    const metrics = (given?.metrics ?? defaultMetrics)(config);
    const fields = { coldStart, service: config.functionName };
    coldStart = false;
    try {
      const summary = await runPull({ config, handler, budgetMs: context.getRemainingTimeInMillis(), log: requestLog, metrics });
      if (summary.breakerOpened) requestLog.warn('invocation summary: the circuit breaker opened', { ...fields, summary });
      else requestLog.info('invocation summary', { ...fields, summary });
      metrics.flush(summary);
      return summary;
    } catch (error) {
      if (error instanceof PullAbortedError) {
        requestLog.error('invocation summary: ended early', { ...fields, summary: error.summary, reason: error.message });
        metrics.flush(error.summary);
      }
      throw error;
    }
  };
}

/** The deployed handler: webhook delivery. */
const handler = createPullFunction(deliverWebhook);

export { createPullFunction, handler };
export type { PullContext };
