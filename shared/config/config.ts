import { backoffDelayMs, tierDelaysMs } from '../retry/backoff.js';
import { envJson, envQueueName, envString, type Env } from './env.js';
import { parseAmqpUrls } from './amqp-urls.js';
import { amqpSecret, type AmqpSecretConfig } from './amqp-secret.js';
import { type ConfigInCode, layered, retryPolicy } from './config-in-code.js';
import { type AckOrder, OPTIONS, type Tracing } from './option-table.js';
import { resolveRateLimit, type ResolvedRateLimit } from './rate-limit.js';
import { ConfigError } from '../errors.js';
import { resolveIdempotencyConfig } from '../idempotency/in-code.js';
import type { ResolvedIdempotencyOptions } from '../idempotency/options.js';
import { assertRetryHeaderName, LAST_DELIVERY_COUNT } from '../message/headers.js';
import type { RetryPolicy } from '../retry/retry-policy.js';
import { resolveRetryRules, type ResolvedRetryRule } from '../retry/retry-rules.js';
import { assertDelayQueueBudget } from '../topology/queue-budget.js';
import type { DelayMode, NativeRetryOptions, QueueType, TopologyOptions } from '../topology/types.js';

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
  /** The longest one attempt may take (`attemptTimeoutMs`); undefined: not set, the invocation derives it from its budget (core/attempt-deadlines.ts). */
  readonly attemptTimeoutMs: number | undefined;
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
  /** Where each attempt's span goes (`tracing` in code, else TRACING): `off`, `opentelemetry` or `xray`. */
  readonly tracing: Tracing;
  /**
   * The idempotency guard's options (`idempotency` in code, else IDEMPOTENCY_STORE and
   * IDEMPOTENCY_TTL_SECONDS); undefined: off, every message runs the handler.
   */
  readonly idempotency?: ResolvedIdempotencyOptions;
  /** Handler starts per second at most, for the queue (`rateLimit` in code, else RATE_LIMIT_*); undefined: no limit. */
  readonly rateLimit?: ResolvedRateLimit;
  /** The broker's management HTTP API (`managementUrl` in code, else MANAGEMENT_URL); undefined: the console derives it from the broker's address. */
  readonly managementUrl?: string;
};

/**
 * The defaults: those of the options with a range are `OPTIONS`' (option-table.ts), written there only;
 * docs/configuration.md's tables mirror them (test/unit/option-table.test.ts checks it).
 * Variables: AMQP_URL, WORK_QUEUE, PARKING_QUEUE (default `<WORK_QUEUE>.parked`), DELAY_MODE, DELAY_RESOLUTION_MS, EXACT_DELAY_PREFIX,
 * QUEUE_TYPE, RETRY_HEADER, MAX_RETRIES, BACKOFF_INITIAL_MS, BACKOFF_MULTIPLIER, BACKOFF_MAX_MS, BACKOFF_JITTER, RETRY_RULES, ACK_ORDER,
 * BATCH_SIZE, MAX_MESSAGES, CONCURRENCY, ATTEMPT_TIMEOUT_MS, CONNECT_TIMEOUT_MS, PUBLISH_TIMEOUT_MS, MAX_MESSAGE_BYTES, IDLE_TIMEOUT_MS, SAFETY_MARGIN_MS,
 * BUDGET_MS, FUNCTION_NAME, BREAKER_THRESHOLD, CRASH_LOOP_LIMIT, TRACING, IDEMPOTENCY_STORE, IDEMPOTENCY_TTL_SECONDS, IDEMPOTENCY_STORE_SECRET_ID,
 * RATE_LIMIT_PER_SECOND, RATE_LIMIT_SHARES, RATE_LIMIT_STORE, MANAGEMENT_URL, AMQP_SECRET_ID, AMQP_HOST, AMQP_PORT, AMQP_VHOST, AMQP_TLS, SECRET_CACHE_SECONDS.
 */
const DEFAULTS = {
  amqpUrl: 'amqp://guest:guest@127.0.0.1:5672',
  workQueue: 'boomerang.work',
  delayMode: OPTIONS.delayMode.default,
  delayResolutionMs: OPTIONS.delayResolutionMs.default,
  exactDelayPrefix: OPTIONS.exactDelayPrefix.default,
  queueType: OPTIONS.queueType.default,
  retryHeader: OPTIONS.retryHeader.default,
  ackOrder: OPTIONS.ackOrder.default,
  /** Also the consumer prefetch: how many unacked messages one invocation holds at most. */
  batchSize: OPTIONS.batchSize.default,
  maxMessages: OPTIONS.maxMessages.default,
  concurrency: OPTIONS.concurrency.default,
  connectTimeoutMs: OPTIONS.connectTimeoutMs.default,
  publishTimeoutMs: OPTIONS.publishTimeoutMs.default,
  /** The queue counts as idle when no delivery came for this long. */
  idleTimeoutMs: OPTIONS.idleTimeoutMs.default,
  /** Stop taking messages this long before the budget ends: room to finish, confirm and close. */
  safetyMarginMs: OPTIONS.safetyMarginMs.default,
  /** Local runs only; in Lambda the budget is the remaining invocation time. */
  budgetMs: OPTIONS.budgetMs.default,
  /** The pull function's name when neither FUNCTION_NAME nor AWS_LAMBDA_FUNCTION_NAME is set. */
  functionName: 'boomerang-pull',
  /** The event function's name when neither FUNCTION_NAME nor AWS_LAMBDA_FUNCTION_NAME is set. */
  eventFunctionName: 'boomerang-event',
  /** RabbitMQ 4.x's (and Amazon MQ's) default `max_message_size`, 16 MiB (see `OPTIONS.maxMessageBytes`). */
  maxMessageBytes: OPTIONS.maxMessageBytes.default,
  breakerThreshold: OPTIONS.breakerThreshold.default,
  /**
   * A delivery whose `x-delivery-count` (returns counted by a quorum queue) reaches this is parked as a
   * crash loop instead of being handled. Below 4.x's default delivery limit of 20, past which the
   * broker drops the message when the queue has no dead-letter target. On 3.10 and 4.0-4.2 each of
   * Boomerang's own give-backs (untried deliveries, nacked) counts too (measured on 3.10.8; 4.3.6
   * counts only crashes, closes and rejects): 10 lets a healthy message be given back 9 times and
   * still leaves 10 returns of room before 4.0-4.2 drop it.
   */
  crashLoopLimit: OPTIONS.crashLoopLimit.default,
  secretCacheSeconds: OPTIONS.secretCacheSeconds.default,
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
  const idempotency = resolveIdempotencyConfig(env, code.idempotency, code.source, workQueue);
  const rules =
    code.rules !== undefined
      ? resolveRetryRules(code.rules, policy, `rules of ${code.source}`)
      : ((json) => (json === undefined ? [] : resolveRetryRules(json, policy)))(envJson(env, 'RETRY_RULES'));
  const config: Config = {
    amqpUrls: parseAmqpUrls(envString(env, 'AMQP_URL') ?? DEFAULTS.amqpUrl),
    amqpSecret: amqpSecret(env),
    workQueue,
    parkingQueue: read.queueName('parkingQueue', 'PARKING_QUEUE', `${workQueue}.parked`),
    delayMode: read.option(OPTIONS.delayMode),
    delayResolutionMs: read.option(OPTIONS.delayResolutionMs),
    exactDelayPrefix: exactDelayPrefix(read),
    queueType: read.option(OPTIONS.queueType),
    retryHeader: retryHeader(read),
    policy,
    rules,
    ackOrder: read.option(OPTIONS.ackOrder),
    batchSize: read.option(OPTIONS.batchSize),
    maxMessages: read.option(OPTIONS.maxMessages),
    concurrency: read.option(OPTIONS.concurrency),
    attemptTimeoutMs: read.optional(OPTIONS.attemptTimeoutMs),
    connectTimeoutMs: read.option(OPTIONS.connectTimeoutMs),
    publishTimeoutMs: read.option(OPTIONS.publishTimeoutMs),
    maxMessageBytes: read.option(OPTIONS.maxMessageBytes),
    idleTimeoutMs: read.option(OPTIONS.idleTimeoutMs),
    safetyMarginMs: read.option(OPTIONS.safetyMarginMs),
    budgetMs: read.option(OPTIONS.budgetMs),
    functionName: functionNameFrom(env, defaultFunctionName),
    breakerThreshold: read.option(OPTIONS.breakerThreshold),
    crashLoopLimit: crashLoopLimit(read),
    tracing: read.option(OPTIONS.tracing),
    idempotency,
    rateLimit: resolveRateLimit(env, code.rateLimit, code.source, idempotency),
    managementUrl: read.optional(OPTIONS.managementUrl),
  };
  if (config.parkingQueue === config.workQueue) {
    const names =
      code.parkingQueue === undefined && code.workQueue === undefined
        ? 'PARKING_QUEUE must differ from WORK_QUEUE'
        : `the parking queue must differ from the work queue in ${code.source}`;
    throw new ConfigError(`${names} (both are ${JSON.stringify(workQueue)})`);
  }
  if (config.delayMode === 'native' && config.queueType !== 'quorum') {
    // The broker's delayed retry, and the dead-lettering of a park, are features of quorum queues.
    const names =
      code.delayMode === undefined
        ? 'DELAY_MODE=native needs QUEUE_TYPE=quorum'
        : `advanced.delayMode 'native' in ${code.source} needs advanced.queueType 'quorum'`;
    throw new ConfigError(`${names}: RabbitMQ 4.3 delays a failed message only on a quorum queue; got ${JSON.stringify(config.queueType)}`);
  }
  assertDelayQueueBudget(topologyOptionsFromConfig(config));
  return Object.freeze(config);
}

/**
 * Why event mode refuses a native queue: the event source mapping acks whole batches over AMQP 0-9-1,
 * so it cannot settle one message with a delay (docs/topology.md#native).
 */
const NATIVE_EVENT_REFUSAL =
  "delayMode 'native' is served by the pull function only: the event source mapping acks whole batches over AMQP 0-9-1 and cannot " +
  "settle a message with a delay. Deploy the queue with deploy.modes ['pull'], or use delayMode 'tiers' or 'exact' for event mode";

/**
 * The builders' view of the config. Tiers cover the base policy and every rule's policy; a native
 * queue also gets the retry limits its work queue's arguments are made of.
 */
function topologyOptionsFromConfig(config: Config): TopologyOptions {
  return {
    ...(config.delayMode === 'native' ? { native: nativeRetryOptions(config) } : {}),
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

/** What a native work queue needs from the policies that can retry: the most retries, the shortest delay. */
function nativeRetryOptions(config: Config): NativeRetryOptions {
  const policies = [config.policy, ...config.rules.filter((r) => r.retry).map((r) => r.policy)];
  return {
    maxRetries: Math.max(...policies.map((p) => p.maxRetries)),
    crashLoopLimit: config.crashLoopLimit,
    // The first retry at full negative jitter (random() = 0): no delay a policy asks for is shorter.
    minDelayMs: Math.min(...policies.map((p) => backoffDelayMs(1, p, () => 0))),
  };
}

/** The function's name (the `service` of logs and metrics): readable even when the rest of the config is bad. */
function functionNameFrom(env: Env, fallback: string): string {
  return envString(env, 'FUNCTION_NAME') ?? envString(env, 'AWS_LAMBDA_FUNCTION_NAME') ?? fallback;
}

type Layered = ReturnType<typeof layered>;

/** `exact` mode's prefix: a queue name, checked as one, naming where it was given. */
function exactDelayPrefix(read: Layered): string {
  const at = read.where(OPTIONS.exactDelayPrefix);
  return envQueueName({ [at]: read.option(OPTIONS.exactDelayPrefix) }, at, '');
}

function crashLoopLimit(read: Layered): number {
  const limit = read.option(OPTIONS.crashLoopLimit);
  // Above it the guard would never fire on a 4.x quorum queue with the default delivery limit: the broker drops the message first.
  if (limit > LAST_DELIVERY_COUNT) {
    throw new ConfigError(
      `${read.where(OPTIONS.crashLoopLimit)} must be from 0 (off) to ${LAST_DELIVERY_COUNT}, got ${limit}: 4.x quorum queues drop a message returned more often`,
    );
  }
  return limit;
}

function retryHeader(read: Layered): string {
  const name = read.option(OPTIONS.retryHeader);
  assertRetryHeaderName(name, read.where(OPTIONS.retryHeader));
  return name;
}

export { DEFAULTS, functionNameFrom, loadConfig, NATIVE_EVENT_REFUSAL, topologyOptionsFromConfig };
export type { AckOrder, AmqpSecretConfig, Config, ConfigInCode };
