/**
 * What the construct deploys for one declared queue: plain data, read from the queue's definition file
 * (and checked against `functionEnvironment`) before any resource is made.
 */
import type { ResolvedDeploy } from '../queues/deploy-options.js';
import type { DelayMode } from '../topology/types.js';
import type { PlanSummary } from '../topology/plan-summary.js';
import type { Tracing } from '../config/option-table.js';
import type { FunctionTimings } from './function-environment.js';
import type { RateLimitReading } from './rate-limit-shares.js';

/** One declared queue, as the construct deploys it. */
type DeployedQueue = {
  /** The queue's name: its functions are `<prefix>-<name>-<mode>`. */
  readonly name: string;
  /** The queue the event source mapping consumes (the functions take it from their definition). */
  readonly workQueue: string;
  /** Where the queue is declared, for messages: `functions/webhooks.ts` (relative to the working directory). */
  readonly file: string;
  /** The absolute path of that file, which the bundles start from. */
  readonly path: string;
  readonly deploy: ResolvedDeploy;
  /** The delay mode the queue's code sets, if it does: its pull bundle then holds that delay path only (bundles.ts). */
  readonly code: { readonly delayMode?: DelayMode };
  /** What the functions read from their environment about time, for the synth's timeout warnings. */
  readonly timings: FunctionTimings;
  /** The complete ARN of the Redis store's password secret (code or functionEnvironment): the pull and event functions may read it. */
  readonly storeSecretArn: string | undefined;
  /** Where each attempt's span goes: the pull and event functions of an `xray` queue get Lambda's active tracing. */
  readonly tracing: Tracing;
  /** The queue's rate limit, as its functions read it; undefined: none. */
  readonly rateLimit: RateLimitReading | undefined;
  /** RATE_LIMIT_SHARES of its pull and event functions (rate-limit-shares.ts); undefined without a rate limit. */
  readonly rateLimitShares: number | undefined;
  /** The queue's topology plan as its functions will build it: what its topology resource carries (topology-resource.ts). */
  readonly topology: PlanSummary;
  /** A line for each `functionEnvironment` variable that the queue's file replaces, with both values. */
  readonly overrides: readonly string[];
};

export type { DeployedQueue };
