/**
 * The handler of a declared queue's topology custom resource (`Custom::BoomerangTopology`), which the
 * CDK construct bundles per queue: on Create and Update it applies the queue's plan, as `boomerang
 * topology apply` does; on Delete it deletes nothing (resource-work.ts). Whatever happens (a config
 * error, a broker that does not answer, the deadline) it answers CloudFormation at the request's
 * `ResponseURL`: without an answer CloudFormation would wait an hour. It reads the same environment as
 * the queue's functions, so it runs locally with `AMQP_URL` in place of the secret.
 */
import type { Config } from '../config/config.js';
import type { Env } from '../config/env.js';
import { createLogger, logLevelFrom, type Logger } from '../observability/logger.js';
import { createLambdaLogger } from '../observability/powertools-logger.js';
import { type CustomResourceOutcome, type ResponseSender, responseBody, sendResponse } from './cfn-response.js';
import { applyRequest, connectFor, deleteRequest, physicalIdOf, type TopologyEvent, type WorkContext } from './resource-work.js';

/** What the handler needs of a declared queue (`queue` of its file in functions/). */
type TopologyQueue = { readonly name: string; readonly loadConfig: (env: Env) => Config };

type TopologyResourceOptions = {
  /** @default process.env */
  readonly env?: Env;
  /** @default inside Lambda: Powertools Logger; elsewhere: JSON lines on stderr, at LOG_LEVEL */
  readonly log?: Logger;
  /** Where the answer goes. @default an HTTPS (or, for a local server, HTTP) PUT to the ResponseURL */
  readonly send?: ResponseSender;
};

/** The part of the Lambda context the handler reads. */
type TopologyResourceContext = { getRemainingTimeInMillis(): number; readonly logStreamName?: string };

/**
 * Kept free of the work before Lambda's timeout: the answer's PUT (three tries) must still fit when
 * the work is cut short.
 */
const ANSWER_RESERVE_MS = 15_000;

/** The work's budget without a Lambda context (a local run). */
const LOCAL_BUDGET_MS = 60_000;

/** Resolves with `work`, or rejects once `ms` have passed. */
async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the work did not finish within ${Math.round(ms / 1000)} s`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The Lambda handler of `queue`'s topology resource; resolves with the outcome it answered.
 * @example
 * import { queue } from './functions/orders.js';
 * export const handler = createTopologyResource(queue);
 */
function createTopologyResource(
  queue: TopologyQueue,
  options: TopologyResourceOptions = {},
): (event: TopologyEvent, context?: TopologyResourceContext) => Promise<CustomResourceOutcome> {
  const env = options.env ?? process.env;
  const service = env.FUNCTION_NAME ?? `boomerang-${queue.name}-topology`;
  const log =
    options.log ??
    (env.AWS_LAMBDA_FUNCTION_NAME === undefined ? createLogger({ level: logLevelFrom(env.LOG_LEVEL) }).child({ service }) : createLambdaLogger({ service }));
  const send = options.send ?? sendResponse;
  return async (event, context) => {
    const budgetMs = Math.max(1000, (context?.getRemainingTimeInMillis() ?? LOCAL_BUDGET_MS + ANSWER_RESERVE_MS) - ANSWER_RESERVE_MS);
    const work: WorkContext = { config: () => queue.loadConfig(env), connect: connectFor(log), log };
    const where = context?.logStreamName === undefined ? '' : ` (log stream ${context.logStreamName})`;
    let outcome: CustomResourceOutcome;
    try {
      outcome = await withDeadline(event.RequestType === 'Delete' ? deleteRequest(event, work) : applyRequest(event, work), budgetMs);
    } catch (error) {
      const { name, message } = error instanceof Error ? error : { name: 'Error', message: String(error) };
      log.error(`${event.RequestType} of the topology of ${queue.name} failed`, { errorName: name, reason: message });
      // Delete never fails: it deletes nothing, so there is nothing to hold the stack's deletion for.
      const status = event.RequestType === 'Delete' ? 'SUCCESS' : 'FAILED';
      outcome = {
        status,
        reason: `${event.RequestType} of the topology of ${queue.name}: ${name}: ${message}. Nothing was deleted${status === 'FAILED' ? '; deploy again once the cause is fixed' : ''}.${where}`,
        physicalResourceId: physicalIdOf(event),
      };
    }
    log.info(`answering CloudFormation: ${outcome.status}`, {
      requestType: event.RequestType,
      logicalResourceId: event.LogicalResourceId,
      physicalResourceId: outcome.physicalResourceId,
      reason: outcome.reason,
    });
    await send(event.ResponseURL, responseBody(event, outcome));
    return outcome;
  };
}

export { createTopologyResource };
