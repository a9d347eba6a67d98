import { DEFAULTS, loadConfig, type Config } from '../config/config.js';
import { runEvent } from './run-event.js';
import type { Handler } from '../message/message.js';
import { createReporter, reportInvocation, type FunctionOptions } from '../observability/report-invocation.js';
import type { Summary } from '../engine/summary.js';

/** The part of the Lambda context the event function reads. */
type EventContext = {
  getRemainingTimeInMillis(): number;
  readonly awsRequestId: string;
};

/**
 * Builds the function an Amazon MQ (RabbitMQ) event source mapping invokes with an `aws:rmq` batch.
 * Config is read once per container; the broker connection (for the retry and parking copies) is
 * opened and closed inside each invocation. It returns the summary when every copy was confirmed (the
 * event source then acks the batch) and throws otherwise (the event source delivers the whole batch
 * again). Each invocation logs one summary line and writes its metrics, also when it fails.
 * @example export const handler = createEventFunction(myHandler);
 */
function createEventFunction(handler: Handler, given: FunctionOptions = {}) {
  const reporter = createReporter(given, DEFAULTS.eventFunctionName);
  let config: Config | undefined = given.config;
  return async (event: unknown, context: EventContext): Promise<Summary> => {
    const report = reporter.start(context.awsRequestId);
    return reportInvocation(report, async () => {
      config ??= (given.loadConfig ?? ((env) => loadConfig(env, DEFAULTS.eventFunctionName)))(reporter.env);
      return runEvent({ config, handler, event, budgetMs: context.getRemainingTimeInMillis(), log: report.log, metrics: report.metrics });
    });
  };
}

export { createEventFunction };
export type { EventContext };
