import { ConfigError } from '../errors.js';
import type { ResolvedDeploy } from '../queues/deploy-options.js';

/** What the construct needs of a queue's rate limit: whether it has one, and whether a store makes it exact. */
type RateLimitReading = { readonly perSecond: number; readonly store: boolean };

/**
 * RATE_LIMIT_SHARES of a queue's pull and event functions (pure): how many of its invocations can run
 * at once, each of which, without a store, takes that share of the limit. The pull function's reserved
 * concurrency, plus one when the queue deploys its event function: for RabbitMQ an Amazon MQ event
 * source mapping runs one invocation at a time (AWS Lambda guide, `with-mq`). An unreserved pull
 * function bounds nothing, so without a store the limit could not hold: refused, naming the file. With
 * a store the share serves only while the store is down; it is then the most ticks its schedule can
 * run at once (timeout over interval, plus the tick that starts while the last one ends).
 * Undefined for a queue without a rate limit.
 * @example rateLimitShares({ name: 'orders', file: 'functions/orders.ts', deploy, rateLimit: { perSecond: 20, store: false } }) // 2 (reserved 1, event deployed)
 */
function rateLimitShares(queue: {
  readonly name: string;
  readonly file: string;
  readonly deploy: ResolvedDeploy;
  readonly rateLimit: RateLimitReading | undefined;
}): number | undefined {
  const { deploy, rateLimit } = queue;
  if (rateLimit === undefined) return undefined;
  const event = deploy.modes.includes('event') ? 1 : 0;
  if (!deploy.modes.includes('pull')) return event;
  const { reservedConcurrency, timeoutSeconds, rateMinutes } = deploy.pull;
  if (reservedConcurrency > 0) return reservedConcurrency + event;
  if (rateLimit.store) return Math.ceil(timeoutSeconds / (rateMinutes * 60)) + 1 + event;
  throw new ConfigError(
    `${queue.file}: the rate limit of ${queue.name} (${rateLimit.perSecond} a second) cannot hold: its pull function is unreserved (deploy.pull.reservedConcurrency 0), ` +
      'so nothing bounds how many of its invocations run at once, and without a store each takes its share of the limit by that number. ' +
      'Reserve its concurrency (deploy.pull.reservedConcurrency: 1 keeps one tick at a time), or give the limit a Redis store, which makes it exact ' +
      '(rateLimit.store in its file, RATE_LIMIT_STORE in functionEnvironment, or a Redis idempotency store)',
  );
}

export { rateLimitShares };
export type { RateLimitReading };
