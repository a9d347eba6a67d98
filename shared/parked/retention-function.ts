/**
 * The scheduled retention function of a declared queue (`deploy.retention`): each run deletes the
 * parked messages older than the queue's `retention.olderThan`, keeps the rest in order, and logs
 * how many it purged and kept. The CDK construct bundles it per queue (shared/cdk/bundles.ts).
 */
import type { Config } from '../config/config.js';
import type { Env } from '../config/env.js';
import { ConfigError } from '../errors.js';
import { createLogger, logLevelFrom, type Logger } from '../observability/logger.js';
import { createLambdaLogger } from '../observability/powertools-logger.js';
import type { Mode } from '../queues/deploy-options.js';
import type { Progress } from './progress.js';
import { purgeOlderThan, type RetentionResult } from './purge.js';
import { withParkingLot } from './session.js';

/** What the function needs of a declared queue (`queue` of its file in functions/). */
type RetentionQueue = {
  readonly name: string;
  readonly loadConfig: (env: Env, mode?: Mode) => Config;
  readonly deploy: { readonly retention: { readonly olderThanMs: number } | undefined };
};

type RetentionFunctionOptions = {
  /** @default process.env */
  readonly env?: Env;
  /** @default inside Lambda: Powertools Logger; elsewhere: JSON lines on stderr, at LOG_LEVEL */
  readonly log?: Logger;
};

/** The part of the Lambda context the function reads. */
type RetentionContext = { getRemainingTimeInMillis(): number };

/**
 * Stop the walk this long before Lambda's timeout: the message in hand is settled and the run ends
 * cleanly (the kept ones now sit behind the rest; the next run carries on). A timeout would do no
 * harm to the messages either, but would count as an error.
 */
const STOP_BEFORE_TIMEOUT_MS = 10_000;

const SILENT: Progress = { update: () => undefined, print: () => undefined, stop: () => undefined };

/**
 * The Lambda handler of a queue's retention schedule. Throws `ConfigError` at once when the queue
 * has no `deploy.retention`.
 * @example
 * import { queue } from './functions/partner-sync.js';
 * export const handler = createRetentionFunction(queue); // deletes what was parked 14 days ago or more
 */
function createRetentionFunction(
  queue: RetentionQueue,
  options: RetentionFunctionOptions = {},
): (event: unknown, context?: RetentionContext) => Promise<RetentionResult> {
  const retention = queue.deploy.retention;
  if (retention === undefined)
    throw new ConfigError(`The queue ${queue.name} has no deploy.retention: set deploy.retention.olderThan in its file to deploy a retention function`);
  const env = options.env ?? process.env;
  const service = env.FUNCTION_NAME ?? `boomerang-${queue.name}-retention`;
  const log =
    options.log ??
    (env.AWS_LAMBDA_FUNCTION_NAME === undefined ? createLogger({ level: logLevelFrom(env.LOG_LEVEL) }).child({ service }) : createLambdaLogger({ service }));
  return async (_event, context) => {
    const config = queue.loadConfig(env, 'pull');
    const deadline = context === undefined ? undefined : AbortSignal.timeout(Math.max(1000, context.getRemainingTimeInMillis() - STOP_BEFORE_TIMEOUT_MS));
    let result: RetentionResult;
    try {
      // The parked CLI's session: its own connection and confirm channel, closed after.
      result = await withParkingLot(
        config,
        config.parkingQueue,
        (ctx) => {
          const signal = deadline === undefined || ctx.signal === undefined ? (deadline ?? ctx.signal) : AbortSignal.any([ctx.signal, deadline]);
          return purgeOlderThan({ ...ctx, signal, progress: () => SILENT }, retention.olderThanMs);
        },
        { connectionName: 'boomerang-retention' },
      );
    } catch (error) {
      const { name, message } = error instanceof Error ? error : { name: 'Error', message: String(error) };
      log.error('retention failed: nothing more was deleted; the next run tries again', {
        parkingQueue: config.parkingQueue,
        errorName: name,
        reason: message,
      });
      throw error;
    }
    if (result.ending === 'done') log.info('retention', { ...result });
    else log.warn(`retention ended early (${result.ending}): the next run carries on`, { ...result });
    return result;
  };
}

export { createRetentionFunction };
