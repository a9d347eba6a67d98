import type { ChannelModel } from 'amqplib';
import { type Config, DEFAULTS, loadConfig, NATIVE_EVENT_REFUSAL } from '../config/config.js';
import { ConfigError } from '../errors.js';
import { createLambdaFunction, type FunctionOptions, type LambdaContext } from '../core/lambda-function.js';
import type { Handler } from '../message/message.js';
import { checkDelayPath } from '../copy/delay-path-check.js';
import type { TopologyOptions } from '../topology/types.js';
import { runEvent } from './run-event.js';

/** The part of the Lambda context the event function reads. */
type EventContext = LambdaContext;

/**
 * Builds the function an Amazon MQ (RabbitMQ) event source mapping invokes with an `aws:rmq` batch.
 * Config is read once per container; the broker connection (for the retry and parking copies) is
 * opened and closed inside each invocation. Before any handler runs, the delay path of each queue of
 * the batch is checked on the broker, once per container and queue (again after a copy came back
 * unroutable): a missing one fails the batch with `TopologyDriftError`, with no handler run. It
 * returns the summary when every copy was confirmed (the event source then acks the batch) and throws
 * otherwise (the event source delivers the whole batch again). Each invocation logs one summary line
 * and writes its metrics, also when it fails.
 * @example export const handler = createEventFunction(myHandler);
 */
function createEventFunction(handler: Handler, given: FunctionOptions = {}) {
  const checked = new Set<string>();
  // Queues whose marker vouched for a destination that was gone: each destination is checked from then on.
  const distrusted = new Set<string>();
  const beforeHandlers = async (connection: ChannelModel, queues: readonly TopologyOptions[]): Promise<void> => {
    const unchecked = queues.filter((topology) => !checked.has(topology.workQueue));
    await Promise.all(unchecked.map((topology) => checkDelayPath(connection, topology, !distrusted.has(topology.workQueue))));
    for (const topology of unchecked) checked.add(topology.workQueue);
  };
  return createLambdaFunction<unknown, EventContext>(given, {
    defaultName: DEFAULTS.eventFunctionName,
    loadConfig: (env) => loadConfig(env, DEFAULTS.eventFunctionName),
    async run({ config, event, budgetMs, log, metrics, idempotency, tracer, pacer }) {
      refuseNative(config);
      try {
        return await runEvent({ config, handler, event, budgetMs, log, metrics, idempotency, tracer, pacer, beforeHandlers });
      } catch (error) {
        // A copy came back unroutable: check every queue again next time, each destination on its own.
        if (isReturnedCopy(error)) {
          for (const queue of checked) distrusted.add(queue);
          checked.clear();
        }
        throw error;
      }
    },
  });
}

/**
 * The event source mapping acks a whole batch over AMQP 0-9-1: it cannot settle one message with a
 * delay, and a native queue has no delay queues to copy a retry to. A native queue is served by pull.
 */
function refuseNative(config: Config): void {
  if (config.delayMode === 'native') throw new ConfigError(NATIVE_EVENT_REFUSAL);
}

/** The batch failed on a copy the broker returned as unroutable (`mandatory`). */
function isReturnedCopy(error: unknown): boolean {
  const cause = (error as { cause?: { reason?: unknown } } | undefined)?.cause;
  return (error as { name?: unknown } | undefined)?.name === 'EventBatchError' && cause?.reason === 'returned';
}

export { createEventFunction };
export type { EventContext };
