import type { Config } from '../config/config.js';
import type { IdempotencyGuard } from '../idempotency/guard.js';
import type { Handler } from '../message/message.js';
import type { Logger } from '../observability/logger.js';
import type { InvocationMetrics } from '../observability/metrics.js';
import type { ModeSettings } from './mode-settings.js';
import type { Pacer } from './pacer.js';
import type { Pause } from './pause.js';
import type { Tally } from './tally.js';

/** Where a delivery came from: its queue and, for an event record, what could not be decoded. */
type Origin = {
  readonly queue: string;
  /** The body could not be decoded: parked with this reason, the handler never sees it. */
  readonly problem?: string;
  /** Fields that arrived unusable and were dropped; logged as a warning. */
  readonly notes?: readonly string[];
};

type LifecycleOptions = {
  readonly config: Pick<
    Config,
    'retryHeader' | 'policy' | 'rules' | 'crashLoopLimit' | 'breakerThreshold' | 'concurrency' | 'attemptTimeoutMs' | 'functionName'
  >;
  readonly handler: Handler;
  /** Runs each handler call at most once per idempotency key. @default none */
  readonly guard?: IdempotencyGuard;
  readonly settings: ModeSettings;
  readonly log: Logger;
  readonly metrics: InvocationMetrics;
  /** In [0, 1), for the backoff jitter. */
  readonly random: () => number;
  /** The invocation's tally: its spans get one span per attempt, which the mode's settlement ends. */
  readonly tally: Tally;
  /** Epoch ms: the handlers' signal aborts, and no handler starts after it. */
  readonly stopAt: number;
  /** Epoch ms: when the invocation started; the unset attempt limit is half of `stopAt` minus this. @default the lifecycle's creation */
  readonly startedAt?: number;
  /** Epoch ms: what the guard keeps a key in progress for. */
  readonly hardStopAt: number;
  /** The queue's rate limit: each handler start waits for its turn. @default none: no limit, no wait */
  readonly pacer?: Pacer;
  /** The invocation's pause (core/pause.ts): while it holds, nothing is tried. @default a pause of its own, never marked */
  readonly pause?: Pause;
};

export type { LifecycleOptions, Origin };
