import { loadConfig, type Config } from '../shared/config.js';
import { createLogger, logLevelFrom, type Logger } from '../shared/logger.js';
import type { Handler } from '../shared/message.js';
import { runPull } from '../shared/pull.js';
import type { Summary } from '../shared/summary.js';
import { handle as deliverWebhook } from './webhook-delivery.js';

/** The part of the Lambda context the pull function reads. */
type PullContext = {
  getRemainingTimeInMillis(): number;
  readonly awsRequestId: string;
};

/**
 * Builds the scheduled pull function around a team's handler. Config is read once per container
 * (at the first invocation); the connection is opened and closed inside each invocation, because a
 * connection cached across a freeze dies of missed heartbeats.
 * @example export const handler = createPullFunction(myHandler);
 */
function createPullFunction(handler: Handler, given?: { config?: Config; log?: Logger }) {
  let config = given?.config;
  const log = given?.log ?? createLogger({ level: logLevelFrom(process.env.LOG_LEVEL) });
  return async (_event: unknown, context: PullContext): Promise<Summary> => {
    config ??= loadConfig();
    const requestLog = log.child({ requestId: context.awsRequestId, queue: config.workQueue });
    const summary = await runPull({ config, handler, budgetMs: context.getRemainingTimeInMillis(), log: requestLog });
    requestLog.info('invocation summary', { summary });
    return summary;
  };
}

/** The deployed handler: webhook delivery. */
const handler = createPullFunction(deliverWebhook);

export { createPullFunction, handler };
export type { PullContext };
