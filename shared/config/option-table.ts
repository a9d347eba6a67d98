import type { OptionRange } from './option-range.js';

/**
 * Who meets an option: `everyday`, a team starting out (a top-level key of `defineQueue`);
 * `advanced`, under `advanced` of `defineQueue`; `connection`, where the function runs (environment
 * only: the stack sets it in AWS); `stack`, derived by the stack from the queue's file, never set by hand.
 */
type OptionTier = 'everyday' | 'advanced' | 'connection' | 'stack';

/**
 * One option, the schema every source reads: where it is given in code and in the environment, the
 * values it takes, its default, who meets it, and its docs. The environment reader (env.ts), the
 * in-code checks (config-in-code.ts), the override warnings (env-overrides.ts) and the tables of
 * docs/configuration.md (test/unit/option-table.test.ts renders and compares them) all read it.
 */
type OptionSpec = {
  /** The environment variable. */
  readonly variable: string;
  /** Where it is given in `defineQueue` (`batchSize`, `retry.jitter`, `advanced.crashLoopLimit`); absent: not in code (`connection`, `stack`). */
  readonly code?: string;
  readonly tier: OptionTier;
  readonly range: OptionRange;
  /** Absent: the option has no default (it is required where used, or computed). */
  readonly default?: number | string;
  /** The default as the docs say it, when the bare value says too little (`16777216` (16 MiB)). */
  readonly defaultDoc?: string;
  /** Why a bound is what it is, where it is not obvious; every source's error ends with it. */
  readonly why?: string;
  /** What it does: the `meaning` column of its row in docs/configuration.md (Markdown). */
  readonly doc: string;
  /** Where it was given in code before, still read for one release with a warning naming `code` (`delayMode`). */
  readonly deprecated?: string;
};

/** Which of the two steps comes first when a message is retried or parked. */
const ACK_ORDERS = ['publish-then-ack', 'ack-then-publish'] as const;
type AckOrder = (typeof ACK_ORDERS)[number];

/** Where the span of each attempt goes: nowhere, the OpenTelemetry API's tracer provider, or AWS X-Ray through Powertools Tracer. */
const TRACINGS = ['off', 'opentelemetry', 'xray'] as const;
type Tracing = (typeof TRACINGS)[number];

/** The time limit of an attempt when `attemptTimeoutMs` is not set: 30 s, as many HTTP clients' and API Gateway's. */
const DEFAULT_ATTEMPT_TIMEOUT_MS = 30_000;

/** RabbitMQ's `x-message-ttl` is a 32-bit signed integer of milliseconds. */
const MAX_TTL_MS = 2 ** 31 - 1;

/**
 * Every option with a range, in one place: each range, default and doc is written here only. `DEFAULTS`
 * (config.ts), `DEFAULT_RETRY_POLICY` and `DEFAULT_IDEMPOTENCY` take their values from here;
 * test/unit/option-table.test.ts checks each row through both sources, and that the tables of
 * docs/configuration.md are the ones these rows render. The rows are in the docs' order.
 */
const OPTIONS = {
  maxRetries: {
    variable: 'MAX_RETRIES',
    code: 'retry.maxRetries',
    tier: 'everyday',
    range: { type: 'integer', min: 0, max: 1000 },
    default: 5,
    doc: 'retries after the first attempt; 0 disables retries (failures are parked at once)',
  },
  // No bound of its own above: it is at most maxDelayMs (resolveRetryPolicy).
  initialDelayMs: {
    variable: 'BACKOFF_INITIAL_MS',
    code: 'retry.initialDelayMs',
    tier: 'everyday',
    range: { type: 'integer', min: 1 },
    default: 1000,
    why: 'with 0 every retry comes back at once: 0 × the multiplier stays 0',
    doc: 'delay before the first retry; at most `retry.maxDelayMs`',
  },
  multiplier: {
    variable: 'BACKOFF_MULTIPLIER',
    code: 'retry.multiplier',
    tier: 'everyday',
    range: { type: 'number', min: 1, max: 100 },
    default: 2,
    doc: 'each retry waits this many times longer than the one before',
  },
  maxDelayMs: {
    variable: 'BACKOFF_MAX_MS',
    code: 'retry.maxDelayMs',
    tier: 'everyday',
    range: { type: 'integer', min: 1, max: MAX_TTL_MS },
    default: 3_600_000,
    doc: "no delay is ever longer than this (1 h; at most RabbitMQ's largest TTL)",
  },
  jitter: {
    variable: 'BACKOFF_JITTER',
    code: 'retry.jitter',
    tier: 'everyday',
    range: { type: 'fraction' },
    default: 0.1,
    doc: 'spread each delay by ± this fraction of it, so a burst of failures does not come back at once',
  },
  // Quorum queues cap prefetch at 2000.
  batchSize: {
    variable: 'BATCH_SIZE',
    code: 'batchSize',
    tier: 'everyday',
    range: { type: 'integer', min: 1, max: 2000 },
    default: 100,
    doc: 'consumer prefetch: unacked messages one invocation holds at most',
  },
  concurrency: {
    variable: 'CONCURRENCY',
    code: 'concurrency',
    tier: 'everyday',
    range: { type: 'integer', min: 1, max: 1000 },
    default: 8,
    doc: 'handlers running at once',
  },
  idempotencyTtlSeconds: {
    variable: 'IDEMPOTENCY_TTL_SECONDS',
    code: 'idempotency.ttlSeconds',
    tier: 'everyday',
    range: { type: 'integer', min: 1, max: 31_536_000 },
    default: 3600,
    doc: 'how long a completed key is remembered (1 hour, as Powertools; [idempotency](idempotency.md))',
  },
  // The slowest limit starts one handler every 1 000 s; the fastest is far above what a limit protects.
  rateLimitPerSecond: {
    variable: 'RATE_LIMIT_PER_SECOND',
    code: 'rateLimit.perSecond',
    tier: 'everyday',
    range: { type: 'number', min: 0.001, max: 10_000 },
    defaultDoc: 'none: no limit',
    doc:
      'handler starts per second at most, for the whole queue: every invocation on it, pull and event, counts (fractions too, 0.5 is one start every 2 s). ' +
      'Without a store each invocation takes its share (`RATE_LIMIT_SHARES`); with one, the invocations share one token bucket in Redis ([pacing a queue](handlers.md#pacing-a-queue))',
  },
  delayMode: {
    variable: 'DELAY_MODE',
    code: 'advanced.delayMode',
    deprecated: 'delayMode',
    tier: 'advanced',
    range: { type: 'choice', choices: ['tiers', 'exact', 'native'] },
    default: 'tiers',
    doc: "per-tier delay queues, exact delays on shared level queues, or (RabbitMQ 4.3+, pull only, quorum queues) the broker's own delayed retry ([native mode](topology.md#native))",
  },
  delayResolutionMs: {
    variable: 'DELAY_RESOLUTION_MS',
    code: 'advanced.delayResolutionMs',
    deprecated: 'delayResolutionMs',
    tier: 'advanced',
    range: { type: 'integer', min: 10, max: 3_600_000 },
    default: 1000,
    doc: '`exact` mode: one time unit',
  },
  exactDelayPrefix: {
    variable: 'EXACT_DELAY_PREFIX',
    code: 'advanced.exactDelayPrefix',
    tier: 'advanced',
    range: { type: 'text' },
    default: 'boomerang.delay',
    doc: '`exact` mode: names of the shared level exchanges and queues start with it (at most 255 bytes, not `amq.`)',
  },
  queueType: {
    variable: 'QUEUE_TYPE',
    code: 'advanced.queueType',
    deprecated: 'queueType',
    tier: 'advanced',
    range: { type: 'choice', choices: ['quorum', 'classic'] },
    default: 'quorum',
    doc:
      'type of the delay and parking queues (and a work queue Boomerang creates). `classic` drops a retry whose delay ends while the work queue is missing, ' +
      'and a classic work queue gives the crash-loop guard nothing to count ([queue type](topology.md))',
  },
  retryHeader: {
    variable: 'RETRY_HEADER',
    code: 'advanced.retryHeader',
    tier: 'advanced',
    range: { type: 'text' },
    default: 'x-retry-no',
    doc:
      'name of the count header. Other `x-` names are refused (the broker owns that namespace: `x-death` would never count up), and so are ' +
      "Boomerang's own headers and `CC`/`BCC`. Not used by `delayMode: 'native'`, whose count is the annotation `x-opt-boomerang-retry-no`",
  },
  ackOrder: {
    variable: 'ACK_ORDER',
    code: 'advanced.ackOrder',
    deprecated: 'ackOrder',
    tier: 'advanced',
    range: { type: 'choice', choices: ACK_ORDERS },
    default: 'publish-then-ack',
    doc: 'which step comes first when a message is retried or parked ([guarantees](guarantees.md))',
  },
  maxMessages: {
    variable: 'MAX_MESSAGES',
    code: 'advanced.maxMessages',
    deprecated: 'maxMessages',
    tier: 'advanced',
    range: { type: 'integer', min: 1 },
    default: 10_000,
    doc: 'messages taken per invocation at most',
  },
  tracing: {
    variable: 'TRACING',
    code: 'advanced.tracing',
    deprecated: 'tracing',
    tier: 'advanced',
    range: { type: 'choice', choices: TRACINGS },
    default: 'off',
    doc:
      "one span per attempt (its handler run, then its settlement), in the message's own trace: the OpenTelemetry API (to the tracer provider the team registers) " +
      'or AWS X-Ray through Powertools Tracer (needs active tracing). Off, nothing is loaded and nothing is done per message ([traces](operations.md#traces))',
  },
  // Lambda's longest timeout is 15 minutes. No default value: unset, the limit depends on the budget (core/attempt-deadlines.ts).
  attemptTimeoutMs: {
    variable: 'ATTEMPT_TIMEOUT_MS',
    code: 'advanced.attemptTimeoutMs',
    tier: 'advanced',
    range: { type: 'integer', min: 10, max: 900_000 },
    defaultDoc: `\`${DEFAULT_ATTEMPT_TIMEOUT_MS}\`, at most half the time an invocation takes messages`,
    doc:
      'the longest one attempt may take: then its `signal` aborts and it fails with `HandlerTimeoutError` (retried by the policy; a failure of the partner for the circuit breaker), and what the handler does later is ignored. ' +
      "Unset, one hung call still leaves an invocation half its time for the others; set, it is kept as given (an attempt still running at the invocation's stop is cut off by the budget) ([time limits](handlers.md#time-limits))",
  },
  connectTimeoutMs: {
    variable: 'CONNECT_TIMEOUT_MS',
    code: 'advanced.connectTimeoutMs',
    tier: 'advanced',
    range: { type: 'integer', min: 100, max: 120_000 },
    default: 5000,
    doc: 'give up connecting after this (at once on a refused login or vhost, a certificate that fails verification, or a port where something other than AMQP answers)',
  },
  publishTimeoutMs: {
    variable: 'PUBLISH_TIMEOUT_MS',
    code: 'advanced.publishTimeoutMs',
    tier: 'advanced',
    range: { type: 'integer', min: 100, max: 120_000 },
    default: 10_000,
    doc: 'a copy not confirmed by then is treated as failed',
  },
  // RabbitMQ accepts at most 512 MiB for max_message_size. The default is 4.x's (and Amazon MQ's) default
  // max_message_size, 16 MiB: the broker counts the body only (headers excluded; measured on 3.10.8 and
  // 4.3.6) and closes the channel on a bigger one, so a bigger copy is not even sent.
  maxMessageBytes: {
    variable: 'MAX_MESSAGE_BYTES',
    code: 'advanced.maxMessageBytes',
    tier: 'advanced',
    range: { type: 'integer', min: 1, max: 512 * 1024 * 1024 },
    default: 16 * 1024 * 1024,
    defaultDoc: '`16777216` (16 MiB)',
    doc:
      "the largest body a copy may have: the broker's `max_message_size`. Pull mode: a failed message with a bigger body is parked without a copy, through the work queue's dead-lettering " +
      "([too large to copy](pull-and-event.md#a-message-too-large-to-copy)); event mode and `delayMode: 'native'` (which copies nothing) do not use it",
  },
  idleTimeoutMs: {
    variable: 'IDLE_TIMEOUT_MS',
    code: 'advanced.idleTimeoutMs',
    tier: 'advanced',
    range: { type: 'integer', min: 10, max: 60_000 },
    default: 500,
    doc: 'the queue counts as idle when no delivery came for this long. Raise it for bodies of several MB: one can take longer than this to arrive, and is then given back untried (a warning says so) at every invocation ([a large body](pull-and-event.md#a-large-body-and-the-idle-window))',
  },
  safetyMarginMs: {
    variable: 'SAFETY_MARGIN_MS',
    code: 'advanced.safetyMarginMs',
    tier: 'advanced',
    range: { type: 'integer', min: 0, max: 600_000 },
    default: 3000,
    doc: 'stop taking messages this long before the budget ends: room to finish, confirm and close (at most half the budget is used)',
  },
  budgetMs: {
    variable: 'BUDGET_MS',
    code: 'advanced.budgetMs',
    tier: 'advanced',
    range: { type: 'integer', min: 100, max: 24 * 3_600_000 },
    default: 60_000,
    doc: "local invocations only: the time budget (in Lambda, the invocation's remaining time)",
  },
  breakerThreshold: {
    variable: 'BREAKER_THRESHOLD',
    code: 'advanced.breakerThreshold',
    tier: 'advanced',
    range: { type: 'integer', min: 0, max: 100_000 },
    default: 10,
    doc: 'retryable failures in a row, in one invocation, that open the circuit breaker; `0` disables it',
  },
  // The upper bound is the broker's: LAST_DELIVERY_COUNT, checked in config.ts (see DEFAULTS.crashLoopLimit for the 10).
  crashLoopLimit: {
    variable: 'CRASH_LOOP_LIMIT',
    code: 'advanced.crashLoopLimit',
    tier: 'advanced',
    range: { type: 'integer', min: 0 },
    default: 10,
    doc:
      'a delivery whose `x-delivery-count` reaches this is parked as a crash loop, untried (native mode leaves its own retries out of the count; event mode counts `x-acquired-count` too; ' +
      'a classic work queue sets no `x-delivery-count`, so the guard cannot work there); `0` disables it; at most 20: 4.x drops a message past 20 returns ([crash loops](operations.md#crash-loops-crash_loop_limit))',
  },
  // The console and the operator function read it; the functions that take messages never do.
  managementUrl: {
    variable: 'MANAGEMENT_URL',
    code: 'advanced.managementUrl',
    tier: 'advanced',
    range: { type: 'http-url' },
    defaultDoc:
      "derived from the broker's address: `https://<host>` for Amazon MQ (its web console), else `http://<host>:<AMQP port + 10000>` " +
      '(`https://` with `amqps://`): 15672 beside 5672',
    doc:
      "RabbitMQ's management HTTP API, which the console asks how many messages of a `delayMode: 'native'` work queue wait for their delay " +
      "(AMQP counts only the ready ones). It logs in as the broker's user, who needs the `management`, `monitoring` or `administrator` tag ([console](console.md#what-it-shows))",
  },
  amqpPort: {
    variable: 'AMQP_PORT',
    tier: 'connection',
    range: { type: 'integer', min: 1, max: 65_535 },
    defaultDoc: "the scheme's (5671 with TLS)",
    doc: 'the broker port, with the broker secret ([broker credentials](deploy.md#broker-credentials-from-aws-secrets-manager))',
  },
  amqpTls: {
    variable: 'AMQP_TLS',
    tier: 'connection',
    range: { type: 'choice', choices: ['true', 'false'] },
    default: 'true',
    doc: 'amqps:// with the broker secret (the stack sets it: Amazon MQ takes AMQP over TLS only)',
  },
  secretCacheSeconds: {
    variable: 'SECRET_CACHE_SECONDS',
    tier: 'connection',
    range: { type: 'integer', min: 0, max: 86_400 },
    default: 300,
    doc: "how long a fetched secret (the broker's, the Redis store's password) is reused by a warm container",
  },
  // The pull function's reserved concurrency (up to 1000) plus the event source mapping's one invocation.
  rateLimitShares: {
    variable: 'RATE_LIMIT_SHARES',
    tier: 'stack',
    range: { type: 'integer', min: 1, max: 1001 },
    default: 1,
    doc:
      "how many invocations of the queue can run at once: without a store each starts at most `rateLimit.perSecond` / this many handlers per second. The stack derives it from the queue's file: " +
      "the pull function's reserved concurrency, plus 1 when the queue deploys its event function ([deploy](deploy.md#pacing-rate_limit_shares))",
  },
} as const satisfies Record<string, OptionSpec>;

/** The value an option's range stands for: its words for a choice, a string for a text, else a number. */
type OptionValue<S extends OptionSpec> = S['range'] extends { readonly type: 'choice'; readonly choices: readonly (infer C)[] }
  ? C
  : S['range'] extends { readonly type: 'text' | 'http-url' }
    ? string
    : number;

export { DEFAULT_ATTEMPT_TIMEOUT_MS, OPTIONS };
export type { AckOrder, OptionSpec, OptionTier, OptionValue, Tracing };
