import { loadConfig, type Config } from '../shared/config.js';
import { runEvent } from '../shared/event/run-event.js';
import { createLogger, logLevelFrom, type Logger } from '../shared/logger.js';
import type { Handler } from '../shared/message.js';
import { EmfMetrics, noMetrics, type InvocationMetrics } from '../shared/metrics.js';
import type { Summary } from '../shared/summary.js';
import { handle as deliverWebhook } from './webhook-delivery.js';

/** The part of the Lambda context the event function reads. */
type EventContext = {
  getRemainingTimeInMillis(): number;
  readonly awsRequestId: string;
};

/**
 * Builds the function an Amazon MQ (RabbitMQ) event source mapping invokes with an `aws:rmq` batch.
 * Config is read once per container; the broker connection (for the retry and parking copies) is
 * opened and closed inside each invocation. It returns the summary when every copy was confirmed (the
 * event source then acks the batch) and throws otherwise (the event source delivers the whole batch again).
 * @example export const handler = createEventFunction(myHandler);
 */
function createEventFunction(handler: Handler, given?: { config?: Config; log?: Logger; metrics?: (config: Config) => InvocationMetrics }) {
  let config = given?.config;
  const log = given?.log ?? createLogger({ level: logLevelFrom(process.env.LOG_LEVEL) });
  return async (event: unknown, context: EventContext): Promise<Summary> => {
    config ??= loadConfig();
    const requestLog = log.child({ requestId: context.awsRequestId, service: config.functionName });
    // EMF lines on stdout inside Lambda only: locally stdout carries the CLI's summary.
    const metrics = given?.metrics?.(config) ?? (process.env.AWS_LAMBDA_FUNCTION_NAME ? new EmfMetrics({ service: config.functionName }) : noMetrics);
    try {
      const summary = await runEvent({ config, handler, event, budgetMs: context.getRemainingTimeInMillis(), log: requestLog, metrics });
      requestLog.info('invocation summary', { summary });
      metrics.flush(summary);
      return summary;
    } catch (error) {
      const { summary } = error as { summary?: Summary };
      requestLog.error('the batch was not settled; the event source will deliver all of it again', { error, summary });
      if (summary) metrics.flush(summary);
      throw error;
    }
  };
}

/** The deployed handler: webhook delivery. */
const handler = createEventFunction(deliverWebhook);

export { createEventFunction, handler };
export type { EventContext };
