import { tierDelaysMs } from '../retry/backoff.js';
import { LAST_DELIVERY_COUNT } from '../core/crash-loop.js';
import { envChoice, envInt, envJson, envQueueName, envString, type Env } from './env.js';
import { type ConfigInCode, layered, retryPolicy } from './config-in-code.js';
import { ConfigError } from '../errors.js';
import { resolveIdempotencyConfig } from '../idempotency/in-code.js';
import type { ResolvedIdempotencyOptions } from '../idempotency/options.js';
import { assertRetryHeaderName, DEFAULT_RETRY_HEADER } from '../message/headers.js';
import { redactUrl } from '../observability/redact.js';
import type { RetryPolicy } from '../retry/retry-policy.js';
import { resolveRetryRules, type ResolvedRetryRule } from '../retry/retry-rules.js';
import { assertDelayQueueBudget } from '../topology/queue-budget.js';
import type { DelayMode, QueueType, TopologyOptions } from '../topology/types.js';

/** Which of the two steps comes first when a message is retried or parked. */
type AckOrder = 'publish-then-ack' | 'ack-then-publish';

/** Everything Boomerang reads from the environment, parsed and validated once at start. */
type Config = {
  /** Broker endpoints (`AMQP_URL`, comma-separated for a cluster); tried in turn. */
  readonly amqpUrls: readonly string[];
  /** Credentials from AWS Secrets Manager instead of `AMQP_URL`; undefined when unset. */
  readonly amqpSecret: AmqpSecretConfig | undefined;
  readonly workQueue: string;
  readonly parkingQueue: string;
  readonly delayMode: DelayMode;
  readonly delayResolutionMs: number;
  /** `exact` mode: names of the shared level exchanges and queues start with this. */
  readonly exactDelayPrefix: string;
  readonly queueType: QueueType;
  readonly retryHeader: string;
  readonly policy: RetryPolicy;
  readonly rules: readonly ResolvedRetryRule[];
  readonly ackOrder: AckOrder;
  readonly batchSize: number;
  readonly maxMessages: number;
  readonly concurrency: number;
  readonly connectTimeoutMs: number;
  readonly publishTimeoutMs: number;
  /** The largest body a copy may have; a bigger message stays in the work queue (see `DEFAULTS.maxMessageBytes`). */
  readonly maxMessageBytes: number;
  readonly idleTimeoutMs: number;
  readonly safetyMarginMs: number;
  readonly budgetMs: number;
  readonly functionName: string;
  /** Consecutive retryable failures in one invocation that open the circuit breaker; 0 disables it. */
  readonly breakerThreshold: number;
  /** Returns counted by the broker (`x-delivery-count`) at which a delivery is parked untried; 0 disables the guard. */
  readonly crashLoopLimit: number;
  /**
   * The idempotency guard's options (`idempotency` in code, else IDEMPOTENCY_STORE and
   * IDEMPOTENCY_TTL_SECONDS); undefined: off, every message runs the handler.
   */
  readonly idempotency?: ResolvedIdempotencyOptions;
};

/**
 * Where the broker credentials come from when `AMQP_SECRET_ID` is set. The secret holds `{"url"}` or
 * `{"username", "password"}` (the shape the Lambda event source mapping uses); with the latter the
 * URL is built from host, port, vhost and TLS.
 */
type AmqpSecretConfig = {
  readonly secretId: string;
  /** Required with a username/password secret; a secret holding a URL needs none of these. */
  readonly host: string | undefined;
  readonly port: number | undefined;
  /** @default '/' */
  readonly vhost: string;
  /** amqps:// when true. @default true */
  readonly tls: boolean;
  /** How long a fetched secret is reused by a warm container. @default 300 */
  readonly cacheSeconds: number;
};

/**
 * The defaults, in one place; the README's configuration table mirrors this object.
 * Variables: AMQP_URL, WORK_QUEUE, PARKING_QUEUE (default `<WORK_QUEUE>.parked`), DELAY_MODE,
 * DELAY_RESOLUTION_MS, EXACT_DELAY_PREFIX, QUEUE_TYPE, RETRY_HEADER, MAX_RETRIES, BACKOFF_INITIAL_MS, BACKOFF_MULTIPLIER,
 * BACKOFF_MAX_MS, BACKOFF_JITTER, RETRY_RULES, ACK_ORDER, BATCH_SIZE, MAX_MESSAGES, CONCURRENCY,
 * CONNECT_TIMEOUT_MS, PUBLISH_TIMEOUT_MS, MAX_MESSAGE_BYTES, IDLE_TIMEOUT_MS, SAFETY_MARGIN_MS, BUDGET_MS, FUNCTION_NAME,
 * BREAKER_THRESHOLD, CRASH_LOOP_LIMIT, IDEMPOTENCY_STORE, IDEMPOTENCY_TTL_SECONDS, AMQP_SECRET_ID, AMQP_HOST, AMQP_PORT, AMQP_VHOST, AMQP_TLS, SECRET_CACHE_SECONDS.
 */
const DEFAULTS = {
  amqpUrl: 'amqp://guest:guest@127.0.0.1:5672',
  workQueue: 'boomerang.work',
  delayMode: 'tiers',
  delayResolutionMs: 1000,
  exactDelayPrefix: 'boomerang.delay',
  queueType: 'quorum',
  retryHeader: DEFAULT_RETRY_HEADER,
  ackOrder: 'publish-then-ack',
  /** Also the consumer prefetch: how many unacked messages one invocation holds at most. */
  batchSize: 100,
  maxMessages: 10_000,
  concurrency: 8,
  connectTimeoutMs: 5000,
  publishTimeoutMs: 10_000,
  /** The queue counts as idle when no delivery came for this long. */
  idleTimeoutMs: 500,
  /** Stop taking messages this long before the budget ends: room to finish, confirm and close. */
  safetyMarginMs: 3000,
  /** Local runs only; in Lambda the budget is the remaining invocation time. */
  budgetMs: 60_000,
  /** The pull function's name when neither FUNCTION_NAME nor AWS_LAMBDA_FUNCTION_NAME is set. */
  functionName: 'boomerang-pull',
  /** The event function's name when neither FUNCTION_NAME nor AWS_LAMBDA_FUNCTION_NAME is set. */
  eventFunctionName: 'boomerang-event',
  /**
   * The largest message body a copy may carry: RabbitMQ 4.x's (and Amazon MQ's) default
   * `max_message_size`, 16 MiB. The broker counts the body only (headers excluded; measured on 3.10.8
   * and 4.3.6) and closes the channel on a bigger one, so a bigger copy is not even sent.
   */
  maxMessageBytes: 16 * 1024 * 1024,
  breakerThreshold: 10,
  /**
   * A delivery whose `x-delivery-count` (returns counted by a quorum queue) reaches this is parked as a
   * crash loop instead of being handled. Below 4.x's default delivery limit of 20, past which the
   * broker drops the message when the queue has no dead-letter target. On 3.10 and 4.0-4.2 each of
   * Boomerang's own give-backs (untried deliveries, nacked) counts too (measured on 3.10.8; 4.3.6
   * counts only crashes, closes and rejects): 10 lets a healthy message be given back 9 times and
   * still leaves 10 returns of room before 4.0-4.2 drop it.
   */
  crashLoopLimit: 10,
  secretCacheSeconds: 300,
} as const;

/**
 * Parses the environment into a frozen `Config`; throws `ConfigError` naming the first bad value and its
 * source: the variable, or the option in code (`batchSize in defineQueue('webhooks')`).
 * `defaultFunctionName` is the name used when neither FUNCTION_NAME nor AWS_LAMBDA_FUNCTION_NAME is set.
 * @example loadConfig(process.env, 'boomerang-pull', { source: "defineQueue('orders')", workQueue: 'orders', batchSize: 50 })
 */
function loadConfig(env: Env = process.env, defaultFunctionName: string = DEFAULTS.functionName, code: ConfigInCode = { source: 'code' }): Config {
  const read = layered(env, code);
  const workQueue = read.queueName('workQueue', 'WORK_QUEUE', DEFAULTS.workQueue);
  const policy = retryPolicy(env, code);
  const rules = code.rules !== undefined
    ? resolveRetryRules(code.rules, policy, `rules of ${code.source}`)
    : ((json) => (json === undefined ? [] : resolveRetryRules(json, policy)))(envJson(env, 'RETRY_RULES'));
  const config: Config = {
    amqpUrls: amqpUrls(env),
    amqpSecret: amqpSecret(env),
    workQueue,
    parkingQueue: read.queueName('parkingQueue', 'PARKING_QUEUE', `${workQueue}.parked`),
    delayMode: read.choice('delayMode', 'DELAY_MODE', ['tiers', 'exact'], DEFAULTS.delayMode),
    delayResolutionMs: read.int('delayResolutionMs', 'DELAY_RESOLUTION_MS', DEFAULTS.delayResolutionMs, 10, 3_600_000),
    exactDelayPrefix: envQueueName(env, 'EXACT_DELAY_PREFIX', DEFAULTS.exactDelayPrefix),
    queueType: read.choice('queueType', 'QUEUE_TYPE', ['quorum', 'classic'], DEFAULTS.queueType),
    retryHeader: retryHeader(env),
    policy,
    rules,
    ackOrder: read.choice('ackOrder', 'ACK_ORDER', ['publish-then-ack', 'ack-then-publish'], DEFAULTS.ackOrder),
    // Quorum queues cap prefetch at 2000.
    batchSize: read.int('batchSize', 'BATCH_SIZE', DEFAULTS.batchSize, 1, 2000),
    maxMessages: read.int('maxMessages', 'MAX_MESSAGES', DEFAULTS.maxMessages, 1),
    concurrency: read.int('concurrency', 'CONCURRENCY', DEFAULTS.concurrency, 1, 1000),
    connectTimeoutMs: envInt(env, 'CONNECT_TIMEOUT_MS', DEFAULTS.connectTimeoutMs, 100, 120_000),
    publishTimeoutMs: envInt(env, 'PUBLISH_TIMEOUT_MS', DEFAULTS.publishTimeoutMs, 100, 120_000),
    // RabbitMQ accepts at most 512 MiB for max_message_size.
    maxMessageBytes: envInt(env, 'MAX_MESSAGE_BYTES', DEFAULTS.maxMessageBytes, 1, 512 * 1024 * 1024),
    idleTimeoutMs: envInt(env, 'IDLE_TIMEOUT_MS', DEFAULTS.idleTimeoutMs, 10, 60_000),
    safetyMarginMs: envInt(env, 'SAFETY_MARGIN_MS', DEFAULTS.safetyMarginMs, 0, 600_000),
    budgetMs: envInt(env, 'BUDGET_MS', DEFAULTS.budgetMs, 100, 24 * 3_600_000),
    functionName: functionNameFrom(env, defaultFunctionName),
    breakerThreshold: envInt(env, 'BREAKER_THRESHOLD', DEFAULTS.breakerThreshold, 0, 100_000),
    crashLoopLimit: crashLoopLimit(env),
    idempotency: resolveIdempotencyConfig(env, code.idempotency, code.source),
  };
  if (config.parkingQueue === config.workQueue) {
    const names = code.parkingQueue === undefined && code.workQueue === undefined ? 'PARKING_QUEUE must differ from WORK_QUEUE' : `the parking queue must differ from the work queue in ${code.source}`;
    throw new ConfigError(`${names} (both are ${JSON.stringify(workQueue)})`);
  }
  assertDelayQueueBudget(topologyOptionsFromConfig(config));
  return Object.freeze(config);
}

/** The builders' view of the config. Tiers cover the base policy and every rule's policy. */
function topologyOptionsFromConfig(config: Config): TopologyOptions {
  return {
    workQueue: config.workQueue,
    parkingQueue: config.parkingQueue,
    delayMode: config.delayMode,
    queueType: config.queueType,
    tierDelaysMs: tierDelaysMs([config.policy, ...config.rules.filter((r) => r.retry).map((r) => r.policy)]),
    delayResolutionMs: config.delayResolutionMs,
    exactNamePrefix: config.exactDelayPrefix,
    maxDelayMs: Math.max(config.policy.maxDelayMs, ...config.rules.map((r) => r.policy.maxDelayMs)),
  };
}

/** The function's name (the `service` of logs and metrics): readable even when the rest of the config is bad. */
function functionNameFrom(env: Env, fallback: string): string {
  return envString(env, 'FUNCTION_NAME') ?? envString(env, 'AWS_LAMBDA_FUNCTION_NAME') ?? fallback;
}

function crashLoopLimit(env: Env): number {
  const limit = envInt(env, 'CRASH_LOOP_LIMIT', DEFAULTS.crashLoopLimit, 0);
  // Above it the guard would never fire on a 4.x quorum queue with the default delivery limit: the broker drops the message first.
  if (limit > LAST_DELIVERY_COUNT) {
    throw new ConfigError(`CRASH_LOOP_LIMIT must be from 0 (off) to ${LAST_DELIVERY_COUNT}, got ${limit}: 4.x quorum queues drop a message returned more often`);
  }
  return limit;
}

function amqpUrls(env: Env): string[] {
  const urls = (envString(env, 'AMQP_URL') ?? DEFAULTS.amqpUrl).split(',').map((u) => u.trim()).filter((u) => u !== '');
  for (const url of urls) {
    if (!/^amqps?:\/\/[^/]/i.test(url)) {
      throw new ConfigError(`AMQP_URL must be amqp:// or amqps:// URLs separated by commas; got ${JSON.stringify(redactUrl(url))}`);
    }
  }
  if (urls.length === 0) throw new ConfigError('AMQP_URL is set but holds no URL');
  return urls;
}

function amqpSecret(env: Env): AmqpSecretConfig | undefined {
  const secretId = envString(env, 'AMQP_SECRET_ID');
  if (secretId === undefined) return undefined;
  const tls = envChoice(env, 'AMQP_TLS', ['true', 'false'], 'true') === 'true';
  return Object.freeze({
    secretId,
    host: envString(env, 'AMQP_HOST'),
    port: env.AMQP_PORT === undefined || env.AMQP_PORT.trim() === '' ? undefined : envInt(env, 'AMQP_PORT', 0, 1, 65_535),
    vhost: envString(env, 'AMQP_VHOST') ?? '/',
    tls,
    cacheSeconds: envInt(env, 'SECRET_CACHE_SECONDS', DEFAULTS.secretCacheSeconds, 0, 86_400),
  });
}

function retryHeader(env: Env): string {
  const name = envString(env, 'RETRY_HEADER') ?? DEFAULTS.retryHeader;
  assertRetryHeaderName(name, 'RETRY_HEADER');
  return name;
}

export { DEFAULTS, functionNameFrom, loadConfig, topologyOptionsFromConfig };
export type { AckOrder, AmqpSecretConfig, Config, ConfigInCode };
