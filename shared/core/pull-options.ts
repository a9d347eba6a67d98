import type { ChannelModel } from 'amqplib';
import type { Config } from '../config/config.js';
import type { IdempotencyGuard } from '../idempotency/guard.js';
import type { Handler } from '../message/message.js';
import type { AttemptTracer } from '../observability/attempt-tracer.js';
import type { Logger } from '../observability/logger.js';
import type { InvocationMetrics } from '../observability/metrics.js';
import type { Pacer } from './pacer.js';

/** What one pull invocation (`runPull`) is given; its consume loop (pull-loop.ts) reads it too. */
type PullOptions = {
  readonly config: Config;
  readonly handler: Handler;
  /** Time this invocation may take, all included (Lambda: `getRemainingTimeInMillis()`). */
  readonly budgetMs: number;
  readonly log: Logger;
  /** @default Math.random */
  readonly random?: () => number;
  /** Told each handler error and retry delay; the caller flushes it with the summary. @default noMetrics */
  readonly metrics?: InvocationMetrics;
  /**
   * Runs once connected, before any message is taken; a throw ends the invocation with that error
   * (the wrapper checks the delay path here, once per container). @default none
   */
  readonly beforeConsume?: (connection: ChannelModel) => Promise<void>;
  /**
   * Runs each handler call at most once per idempotency key (the wrapper's guard when
   * `config.idempotency` is set). @default none: every message runs the handler
   */
  readonly idempotency?: IdempotencyGuard;
  /** Starts one span per attempt, which its settlement ends. @default noTracer: tracing off */
  readonly tracer?: AttemptTracer;
  /** Paces the handler starts (the wrapper's, when `config.rateLimit` is set). @default none: no limit */
  readonly pacer?: Pacer;
};

export type { PullOptions };
