/**
 * The environment of a deployed function: what the construct sets itself, plus its `functionEnvironment`
 * prop (the context key of the example app). At synth the whole of it goes through each queue's own parser (its definition's
 * `loadConfig`, the webhook handler's `httpTimeoutMsFromEnv`), so a value they would refuse at their
 * first invocation fails the synth instead, naming the context key.
 */
import { httpTimeoutMsFromEnv } from '../examples/webhooks/webhook-delivery.js';
import { ConfigError, isNamedError } from '../errors.js';
import { describeUrl, redisUrlHasPassword } from '../idempotency/options.js';
import { METRICS_NAMESPACE } from '../observability/metrics.js';
import { redactUrl } from '../observability/redact.js';
import type { QueueDefinition } from '../queues/define-queue.js';
import type { Tracing } from '../config/option-table.js';
import type { RateLimitReading } from './rate-limit-shares.js';

/** Where the stack-set values come from (tokens in the stack, placeholders at the check). */
type StackValues = {
  /** The queue's vhost (`deploy.virtualHost`). */
  readonly virtualHost: string;
  readonly secretArn: string;
  readonly brokerHost: string;
  readonly functionName: string;
  /** `dynamodb:<table>` when the stack created the queue's idempotency table; it goes over `extra`. @default none */
  readonly idempotencyStore?: string;
  /** RATE_LIMIT_SHARES of a queue with a rate limit (rate-limit-shares.ts). @default none */
  readonly rateLimitShares?: number;
};

/** The variables the stack sets, each with where it comes from: `functionEnvironment` may not set them. */
const STACK_VARIABLES: Readonly<Record<string, string>> = {
  WORK_QUEUE: 'each queue names its work queue in its functions/<name>.ts (workQueue in defineQueue), which also names the queue of its event source mapping',
  PARKING_QUEUE: 'each queue names its parking lot in its functions/<name>.ts (parkingQueue in defineQueue; default <workQueue>.parked)',
  AMQP_VHOST: "the stack sets it from the queue's deploy.virtualHost in its functions/<name>.ts, which is also the VIRTUAL_HOST of its event source mapping",
  AMQP_SECRET_ID:
    'the stack sets it to the broker secret (brokerSecret; the BrokerSecretArn parameter of the example app), the one secret the functions may read',
  AMQP_HOST: 'the stack sets it to the broker host (brokerHost; the BrokerHost parameter of the example app), or the host of the broker it creates',
  AMQP_TLS: 'the stack sets it to true: Amazon MQ takes AMQP over TLS only (port 5671)',
  AMQP_URL: 'the deployed functions connect with the broker secret to AMQP_HOST and never read AMQP_URL',
  FUNCTION_NAME: 'the stack sets it to the function name, which the alarms watch',
  POWERTOOLS_SERVICE_NAME: 'the stack sets it to the function name: it is the `service` dimension the alarms watch',
  POWERTOOLS_METRICS_NAMESPACE: `the stack sets it to ${METRICS_NAMESPACE}, the namespace the alarms watch`,
  RATE_LIMIT_SHARES:
    "the stack sets it for a queue with a rate limit, from its functions/<name>.ts: the pull function's reserved concurrency (deploy.pull.reservedConcurrency), plus 1 when it deploys its event function",
};

/** The one NODE_OPTIONS a function may get: file-and-line stack traces (docs/deploy.md, "The bundles"). */
const SAFE_NODE_OPTIONS = '--enable-source-maps';

/**
 * A complete secret ARN, with the six characters Secrets Manager adds to the name: the functions'
 * grant names this one resource (and an event source mapping's BASIC_AUTH takes no other), and a
 * partial ARN or a bare name would match no secret.
 */
const COMPLETE_SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+-[A-Za-z0-9]{6}$/;

/**
 * Refuses what would weaken every function of the stack, or put a password in the template: TLS
 * verification turned off, NODE_OPTIONS other than source maps, a password in AMQP_URL, in a Redis
 * IDEMPOTENCY_STORE or in RATE_LIMIT_STORE. Passwords never appear in the error.
 */
function refuseUnsafe(extra: Readonly<Record<string, string>>): void {
  if (extra.NODE_TLS_REJECT_UNAUTHORIZED !== undefined) {
    throw new ConfigError(
      'functionEnvironment must not set NODE_TLS_REJECT_UNAUTHORIZED: with 0, Node checks no TLS certificate on any connection of the functions ' +
        "(the broker, Secrets Manager, the idempotency store, the handler's own calls), so anyone on the path can read and change what they send; " +
        "1 is already Node's default. Give the server a certificate its clients can verify instead.",
    );
  }
  const nodeOptions = extra.NODE_OPTIONS;
  if (nodeOptions !== undefined && nodeOptions.trim() !== SAFE_NODE_OPTIONS) {
    throw new ConfigError(
      `functionEnvironment must not set NODE_OPTIONS to ${JSON.stringify(nodeOptions)}: it can load code into every function before its handler (--require, --import) ` +
        `or weaken its TLS (--tls-min-v1.0, --tls-cipher-list). The one value accepted is ${SAFE_NODE_OPTIONS}, for file-and-line stack traces (docs/deploy.md, "The bundles").`,
    );
  }
  const url = extra.AMQP_URL;
  if (url?.split(',').some((one) => redactUrl(one.trim()) !== one.trim())) {
    throw new ConfigError(
      `functionEnvironment must not hold a password in AMQP_URL (${redactUrl(url)}): it would be readable in the template and the function configuration. ` +
        'Put the credentials in the broker secret (brokerSecret; BrokerSecretArn in the example app) and remove AMQP_URL.',
    );
  }
  const rateStore = extra.RATE_LIMIT_STORE;
  if (rateStore !== undefined && redisUrlHasPassword(rateStore)) {
    throw new ConfigError(
      `functionEnvironment must not hold a password in RATE_LIMIT_STORE (${describeUrl(rateStore)}): it would be readable in the template and the function configuration. ` +
        "A rate limit whose Redis asks for a password takes it from the idempotency store's secret: make that Redis the queue's IDEMPOTENCY_STORE, " +
        "with its password secret named by IDEMPOTENCY_STORE_SECRET_ID, and remove RATE_LIMIT_STORE (the idempotency store then keeps the limit's bucket too).",
    );
  }
  const store = extra.IDEMPOTENCY_STORE;
  // ioredis takes a password from the URL's credentials or from its `password` query parameter.
  if (store !== undefined && redisUrlHasPassword(store)) {
    throw new ConfigError(
      `functionEnvironment must not hold a password in IDEMPOTENCY_STORE (${describeUrl(store)}): it would be readable in the template and the function configuration. ` +
        'Put the password in a Secrets Manager secret (the password alone, or {"password": "...", "username": "..."}), name it by its complete ARN with ' +
        "IDEMPOTENCY_STORE_SECRET_ID in functionEnvironment (or idempotency.storeSecretId in the queue's functions/<name>.ts), and remove the password from IDEMPOTENCY_STORE: " +
        'the stack lets the functions read that one secret.',
    );
  }
}

/** The whole environment of one function, the stack's variables first, then `extra` (functionEnvironment). */
function functionEnvironment(values: StackValues, extra: Readonly<Record<string, string>>): Record<string, string> {
  return {
    AMQP_SECRET_ID: values.secretArn,
    AMQP_HOST: values.brokerHost,
    AMQP_VHOST: values.virtualHost,
    AMQP_TLS: 'true',
    FUNCTION_NAME: values.functionName,
    // The `service` dimension of the metrics (namespace Boomerang) and of the parked alarms.
    POWERTOOLS_SERVICE_NAME: values.functionName,
    POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
    ...extra,
    ...(values.idempotencyStore === undefined ? {} : { IDEMPOTENCY_STORE: values.idempotencyStore }),
    ...(values.rateLimitShares === undefined ? {} : { RATE_LIMIT_SHARES: String(values.rateLimitShares) }),
  };
}

/** What the checks after the parse need from the functions' view of their environment. */
type FunctionTimings = {
  readonly httpTimeoutMs: number;
  readonly safetyMarginMs: number;
  /** `attemptTimeoutMs` when the queue's file or functionEnvironment sets it; undefined: the default, derived from the budget. */
  readonly attemptTimeoutMs?: number;
};

/** What the stack needs from the functions' view of their environment. */
type FunctionReading = {
  readonly timings: FunctionTimings;
  /** The complete ARN of the secret holding the Redis store's password, which the functions may read; undefined: none. */
  readonly storeSecretArn: string | undefined;
  /** Where each attempt's span goes (`tracing`, or TRACING in functionEnvironment): `xray` needs Lambda's active tracing. */
  readonly tracing: Tracing;
  /** The queue's rate limit (`rateLimit`, or RATE_LIMIT_PER_SECOND in functionEnvironment), and whether a store serves it. */
  readonly rateLimit: RateLimitReading | undefined;
};

/**
 * A queue's function environment at synth: placeholders for the values only known at deploy (the
 * parsers read them as plain strings), then `extra`.
 */
function synthEnvironment(queue: Pick<QueueDefinition, 'deploy'>, extra: Readonly<Record<string, string>>): Record<string, string> {
  return functionEnvironment(
    {
      virtualHost: queue.deploy.virtualHost,
      secretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:synth-check',
      brokerHost: 'broker.synth-check.invalid',
      functionName: 'synth-check',
      idempotencyStore: queue.deploy.idempotencyTable ? 'dynamodb:synth-check-table' : undefined,
    },
    extra,
  );
}

/**
 * Checks `extra` (functionEnvironment) the way one queue's functions will read it, on top of the options
 * in its definition. Throws `ConfigError` naming functionEnvironment and the queue: a variable the stack
 * or the definition sets, what `refuseUnsafe` refuses, or any value the functions' parsers refuse (`MAX_RETRIES=abc`...),
 * and a Redis password secret not named by its complete ARN.
 * @example checkFunctionEnvironment(webhooksQueue, { HTTP_TIMEOUT_MS: '5000' }).timings.httpTimeoutMs // 5000
 */
function checkFunctionEnvironment(queue: Pick<QueueDefinition, 'name' | 'loadConfig' | 'deploy'>, extra: Readonly<Record<string, string>>): FunctionReading {
  refuseUnsafe(extra);
  const owned = Object.keys(extra).find((name) => Object.hasOwn(STACK_VARIABLES, name));
  if (owned !== undefined) throw new ConfigError(`functionEnvironment must not set ${owned}: ${STACK_VARIABLES[owned]}`);
  if (queue.deploy.idempotencyTable && extra.IDEMPOTENCY_STORE !== undefined) {
    throw new ConfigError(
      `functionEnvironment must not set IDEMPOTENCY_STORE: ${queue.name} asks for the stack's idempotency table (idempotency: { store: 'dynamodb' } in its functions/${queue.name}.ts), and the stack points its functions at it`,
    );
  }
  const env = synthEnvironment(queue, extra);
  let reading: FunctionReading;
  try {
    const config = queue.loadConfig(env);
    const store = config.idempotency?.store;
    const limit = config.rateLimit;
    reading = {
      timings: { httpTimeoutMs: httpTimeoutMsFromEnv(env), safetyMarginMs: config.safetyMarginMs, attemptTimeoutMs: config.attemptTimeoutMs },
      storeSecretArn: store?.kind === 'redis' ? store.secretId : undefined,
      tracing: config.tracing,
      rateLimit: limit === undefined ? undefined : { perSecond: limit.perSecond, store: limit.store !== undefined },
    };
  } catch (error) {
    if (!isNamedError<ConfigError>(error, 'ConfigError')) throw error;
    throw new ConfigError(`functionEnvironment: ${error.message} (the functions of ${queue.name} would refuse to start with it)`, { cause: error });
  }
  const arn = reading.storeSecretArn;
  if (arn !== undefined && !COMPLETE_SECRET_ARN.test(arn)) {
    throw new ConfigError(
      `The Redis password secret of ${queue.name} is ${JSON.stringify(arn)}; deployed, it must be the secret's complete ARN ` +
        '(arn:aws:secretsmanager:<region>:<account>:secret:<name>-AbCdEf, as `aws secretsmanager describe-secret` prints it): the stack grants the functions ' +
        `secretsmanager:GetSecretValue on that one secret. Give it as idempotency.storeSecretId in functions/${queue.name}.ts or IDEMPOTENCY_STORE_SECRET_ID in functionEnvironment`,
    );
  }
  return reading;
}

export { checkFunctionEnvironment, COMPLETE_SECRET_ARN, functionEnvironment, synthEnvironment };
export type { FunctionTimings };
