import { DEFAULTS, loadConfig } from '../config/config.js';
import { createLambdaFunction, type FunctionOptions, type LambdaContext } from '../engine/lambda-function.js';
import type { Handler } from '../message/message.js';
import { runEvent } from './run-event.js';

/** The part of the Lambda context the event function reads. */
type EventContext = LambdaContext;

/**
 * Builds the function an Amazon MQ (RabbitMQ) event source mapping invokes with an `aws:rmq` batch.
 * Config is read once per container; the broker connection (for the retry and parking copies) is
 * opened and closed inside each invocation. It returns the summary when every copy was confirmed (the
 * event source then acks the batch) and throws otherwise (the event source delivers the whole batch
 * again). Each invocation logs one summary line and writes its metrics, also when it fails.
 * @example export const handler = createEventFunction(myHandler);
 */
function createEventFunction(handler: Handler, given: FunctionOptions = {}) {
  return createLambdaFunction<unknown, EventContext>(given, {
    defaultName: DEFAULTS.eventFunctionName,
    loadConfig: (env) => loadConfig(env, DEFAULTS.eventFunctionName),
    run: ({ config, event, budgetMs, log, metrics, idempotency }) => runEvent({ config, handler, event, budgetMs, log, metrics, idempotency }),
  });
}

export { createEventFunction };
export type { EventContext, FunctionOptions };
