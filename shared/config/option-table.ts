import type { OptionRange } from './option-range.js';

/** One option: where it is given, the values it takes, its default. The environment reader and the in-code checks both read it. */
type OptionSpec = {
  /** The environment variable. */
  readonly variable: string;
  /** Where it is given in code (`batchSize` of `defineQueue`, `retry.jitter`); absent: environment only. */
  readonly code?: string;
  readonly range: OptionRange;
  /** Absent: the option has no default (it is required where used, or computed). */
  readonly default?: number | string;
  /** Why a bound is what it is, where it is not obvious; every source's error ends with it. */
  readonly why?: string;
  /** What it does, in a line (the `meaning` column of docs/configuration.md says the same at more length). */
  readonly doc: string;
};

/** Which of the two steps comes first when a message is retried or parked. */
const ACK_ORDERS = ['publish-then-ack', 'ack-then-publish'] as const;
type AckOrder = (typeof ACK_ORDERS)[number];

/** Where the span of each attempt goes: nowhere, the OpenTelemetry API's tracer provider, or AWS X-Ray through Powertools Tracer. */
const TRACINGS = ['off', 'opentelemetry', 'xray'] as const;
type Tracing = (typeof TRACINGS)[number];

/** RabbitMQ's `x-message-ttl` is a 32-bit signed integer of milliseconds. */
const MAX_TTL_MS = 2 ** 31 - 1;

/**
 * Every option with a range, in one place: each range and default is written here only. `DEFAULTS`
 * (config.ts), `DEFAULT_RETRY_POLICY` and `DEFAULT_IDEMPOTENCY` take their values from here;
 * test/unit/option-table.test.ts checks each row through both sources and against docs/configuration.md.
 */
const OPTIONS = {
  delayMode: {
    variable: 'DELAY_MODE',
    code: 'delayMode',
    range: { type: 'choice', choices: ['tiers', 'exact', 'native'] },
    default: 'tiers',
    doc: "per-tier delay queues, exact delays on shared level queues, or (RabbitMQ 4.3+, pull only, quorum work queue) the broker's own delayed retry",
  },
  delayResolutionMs: {
    variable: 'DELAY_RESOLUTION_MS',
    code: 'delayResolutionMs',
    range: { type: 'integer', min: 10, max: 3_600_000 },
    default: 1000,
    doc: '`exact` mode: one time unit',
  },
  queueType: {
    variable: 'QUEUE_TYPE',
    code: 'queueType',
    range: { type: 'choice', choices: ['quorum', 'classic'] },
    default: 'quorum',
    doc: 'type of the delay and parking queues',
  },
  ackOrder: {
    variable: 'ACK_ORDER',
    code: 'ackOrder',
    range: { type: 'choice', choices: ACK_ORDERS },
    default: 'publish-then-ack',
    doc: 'which step comes first when a message is retried or parked',
  },
  // Quorum queues cap prefetch at 2000.
  batchSize: {
    variable: 'BATCH_SIZE',
    code: 'batchSize',
    range: { type: 'integer', min: 1, max: 2000 },
    default: 100,
    doc: 'consumer prefetch: unacked messages one invocation holds at most',
  },
  maxMessages: {
    variable: 'MAX_MESSAGES',
    code: 'maxMessages',
    range: { type: 'integer', min: 1 },
    default: 10_000,
    doc: 'messages taken per invocation at most',
  },
  concurrency: { variable: 'CONCURRENCY', code: 'concurrency', range: { type: 'integer', min: 1, max: 1000 }, default: 8, doc: 'handlers running at once' },
  maxRetries: {
    variable: 'MAX_RETRIES',
    code: 'retry.maxRetries',
    range: { type: 'integer', min: 0, max: 1000 },
    default: 5,
    doc: 'retries after the first attempt; 0 disables retries (failures are parked at once)',
  },
  // No bound of its own above: it is at most maxDelayMs (resolveRetryPolicy).
  initialDelayMs: {
    variable: 'BACKOFF_INITIAL_MS',
    code: 'retry.initialDelayMs',
    range: { type: 'integer', min: 1 },
    default: 1000,
    why: 'with 0 every retry comes back at once: 0 × the multiplier stays 0',
    doc: 'delay before the first retry',
  },
  multiplier: {
    variable: 'BACKOFF_MULTIPLIER',
    code: 'retry.multiplier',
    range: { type: 'number', min: 1, max: 100 },
    default: 2,
    doc: 'each retry waits this many times longer than the one before',
  },
  maxDelayMs: {
    variable: 'BACKOFF_MAX_MS',
    code: 'retry.maxDelayMs',
    range: { type: 'integer', min: 1, max: MAX_TTL_MS },
    default: 3_600_000,
    doc: 'no delay is ever longer than this (1 h)',
  },
  jitter: {
    variable: 'BACKOFF_JITTER',
    code: 'retry.jitter',
    range: { type: 'fraction' },
    default: 0.1,
    doc: 'spread each delay by ± this fraction of it, so a burst of failures does not come back at once',
  },
  connectTimeoutMs: { variable: 'CONNECT_TIMEOUT_MS', range: { type: 'integer', min: 100, max: 120_000 }, default: 5000, doc: 'give up connecting after this' },
  publishTimeoutMs: {
    variable: 'PUBLISH_TIMEOUT_MS',
    range: { type: 'integer', min: 100, max: 120_000 },
    default: 10_000,
    doc: 'a copy not confirmed by then is treated as failed',
  },
  // RabbitMQ accepts at most 512 MiB for max_message_size. The default is 4.x's (and Amazon MQ's) default
  // max_message_size, 16 MiB: the broker counts the body only (headers excluded; measured on 3.10.8 and
  // 4.3.6) and closes the channel on a bigger one, so a bigger copy is not even sent.
  maxMessageBytes: {
    variable: 'MAX_MESSAGE_BYTES',
    range: { type: 'integer', min: 1, max: 512 * 1024 * 1024 },
    default: 16 * 1024 * 1024,
    doc: 'the largest body a copy may have; a failed bigger message is parked without a copy (pull mode only)',
  },
  idleTimeoutMs: {
    variable: 'IDLE_TIMEOUT_MS',
    range: { type: 'integer', min: 10, max: 60_000 },
    default: 500,
    doc: 'the queue counts as idle when no delivery came for this long',
  },
  safetyMarginMs: {
    variable: 'SAFETY_MARGIN_MS',
    range: { type: 'integer', min: 0, max: 600_000 },
    default: 3000,
    doc: 'stop taking messages this long before the budget ends: room to finish, confirm and close',
  },
  budgetMs: {
    variable: 'BUDGET_MS',
    range: { type: 'integer', min: 100, max: 24 * 3_600_000 },
    default: 60_000,
    doc: 'local runs only; in Lambda the budget is the remaining invocation time',
  },
  breakerThreshold: {
    variable: 'BREAKER_THRESHOLD',
    range: { type: 'integer', min: 0, max: 100_000 },
    default: 10,
    doc: 'consecutive retryable failures in one invocation that open the circuit breaker; 0 disables it',
  },
  // The upper bound is the broker's: LAST_DELIVERY_COUNT, checked in config.ts (see DEFAULTS.crashLoopLimit for the 10).
  crashLoopLimit: {
    variable: 'CRASH_LOOP_LIMIT',
    range: { type: 'integer', min: 0 },
    default: 10,
    doc: 'returns counted by the broker at which a delivery is parked untried; 0 disables the guard',
  },
  amqpPort: { variable: 'AMQP_PORT', range: { type: 'integer', min: 1, max: 65_535 }, doc: 'the broker port, with a username/password secret' },
  amqpTls: { variable: 'AMQP_TLS', range: { type: 'choice', choices: ['true', 'false'] }, default: 'true', doc: 'amqps:// with a username/password secret' },
  secretCacheSeconds: {
    variable: 'SECRET_CACHE_SECONDS',
    range: { type: 'integer', min: 0, max: 86_400 },
    default: 300,
    doc: 'how long a fetched secret is reused by a warm container',
  },
  // Longer than a year is almost surely milliseconds typed as seconds.
  tracing: {
    variable: 'TRACING',
    code: 'tracing',
    range: { type: 'choice', choices: TRACINGS },
    default: 'off',
    doc: "one span per attempt, in the message's trace: off, the OpenTelemetry API (a tracer provider the team registers) or AWS X-Ray (Powertools Tracer)",
  },
  // The slowest limit starts one handler every 1 000 s; the fastest is far above what a limit protects.
  rateLimitPerSecond: {
    variable: 'RATE_LIMIT_PER_SECOND',
    code: 'rateLimit.perSecond',
    range: { type: 'number', min: 0.001, max: 10_000 },
    doc: 'handler starts per second at most, for the whole queue (every invocation on it, pull and event); fractions too (0.5 is one start every 2 s)',
  },
  // The pull function's reserved concurrency (up to 1000) plus the event source mapping's one invocation.
  rateLimitShares: {
    variable: 'RATE_LIMIT_SHARES',
    range: { type: 'integer', min: 1, max: 1001 },
    default: 1,
    doc: 'how many invocations of the queue can run at once: without a store, each starts at most RATE_LIMIT_PER_SECOND / this many handlers per second (the stack sets it)',
  },
  idempotencyTtlSeconds: {
    variable: 'IDEMPOTENCY_TTL_SECONDS',
    code: 'idempotency.ttlSeconds',
    range: { type: 'integer', min: 1, max: 31_536_000 },
    default: 3600,
    doc: 'how long a completed key is remembered (1 hour, as Powertools)',
  },
} as const satisfies Record<string, OptionSpec>;

/** The value an option's range stands for: its words for a choice, else a number. */
type OptionValue<S extends OptionSpec> = S['range'] extends { readonly type: 'choice'; readonly choices: readonly (infer C)[] } ? C : number;

export { OPTIONS };
export type { AckOrder, OptionSpec, OptionValue, Tracing };
