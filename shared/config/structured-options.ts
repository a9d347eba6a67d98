import { type Env, envJson, envQueueName } from './env.js';
import type { OptionTier } from './option-table.js';
import { resolveRateLimit } from './rate-limit.js';

/**
 * An option whose value is no number or word of a range: a name, a queue, a URL, a list of rules, a
 * function. Its row says where it is given and what it means, like a row of `OPTIONS`; `reader` names
 * the function that parses and checks it, which is where its errors are written.
 */
type StructuredOption = {
  /** Where `defineQueue` takes it; absent: not in code (`connection`, `stack`). */
  readonly code?: string;
  /** The environment variable; absent: in code only (a function, the queue's name, how it is deployed). */
  readonly variable?: string;
  readonly tier: OptionTier;
  /** The default, as the docs say it. */
  readonly defaultDoc: string;
  /** The values it takes, as the docs say them. */
  readonly values: string;
  /** What it does: the `meaning` column of its row in docs/configuration.md (Markdown). */
  readonly doc: string;
  /** The function that parses and checks it (file: function). */
  readonly reader: string;
  /**
   * Its variable alone through that reader, for the override notes (env-overrides.ts): throws when the
   * value would be refused. Only for an option that has both a place in code and a variable.
   */
  readonly check?: (env: Env) => unknown;
};

/**
 * The options outside `OPTIONS`, in the docs' order within each tier. With `OPTIONS` they are every
 * option: the tables of docs/configuration.md are rendered from both (test/unit/option-table.test.ts),
 * and `defineQueue`'s everyday keys are the first segments of the everyday rows.
 */
const STRUCTURED_OPTIONS: readonly StructuredOption[] = [
  {
    code: 'name',
    tier: 'everyday',
    defaultDoc: 'required',
    values: 'lower-case letters, digits and hyphens, starting with a letter, at most 40 characters',
    doc: "the queue's name in Boomerang: `--function <name>` in the CLIs, `<stackName>-<name>-pull` and `-event` in AWS",
    reader: 'queues/define-queue.ts: defineQueue',
  },
  {
    code: 'handler',
    tier: 'everyday',
    defaultDoc: 'required',
    values: '`(message, context) => Promise<void>`',
    doc: "the team's handler: resolve to ack, throw to retry (`RetryableError`) or park (`UnrecoverableError`) ([handlers](handlers.md))",
    reader: 'queues/define-queue.ts: defineQueue',
  },
  {
    code: 'workQueue',
    variable: 'WORK_QUEUE',
    tier: 'everyday',
    defaultDoc: 'required in code',
    values: 'a queue name (at most 255 bytes, not `amq.`)',
    doc: 'the queue the handler consumes. `WORK_QUEUE` is read only where no definition is used (`invoke --handler`, `topology --work-queue`, `parked`, the console; default `boomerang.work`)',
    reader: 'config/config-in-code.ts: layered().queueName',
    check: (env) => envQueueName(env, 'WORK_QUEUE', ''),
  },
  {
    code: 'parkingQueue',
    variable: 'PARKING_QUEUE',
    tier: 'everyday',
    defaultDoc: '`<work queue>.parked`',
    values: 'a queue name other than the work queue',
    doc: 'where parked messages go',
    reader: 'config/config-in-code.ts: layered().queueName',
    check: (env) => envQueueName(env, 'PARKING_QUEUE', ''),
  },
  {
    code: 'rules',
    variable: 'RETRY_RULES',
    tier: 'everyday',
    defaultDoc: 'none',
    values: 'an array of rules (the variable: as JSON)',
    doc:
      'rules that override the retry policy per case ([backoff and rules](handlers.md#backoff-and-rules)). Besides `match`, a rule may set `retry`, `pauseQueue` ' +
      '(`true`: a matching failure pauses the whole queue, [pausing the queue](handlers.md#pausing-the-queue-when-the-partner-says-slow-down); `false`: it never does) and the policy fields',
    reader: 'retry/retry-rules.ts: resolveRetryRules',
    check: (env) => envJson(env, 'RETRY_RULES'),
  },
  {
    code: 'idempotency.store',
    variable: 'IDEMPOTENCY_STORE',
    tier: 'everyday',
    defaultDoc: 'off',
    values: "`redis://…`, `rediss://…`, `dynamodb:<table>` or, in code, `'dynamodb'` (the table the stack creates)",
    doc:
      'opt-in idempotent handlers: `idempotency` is `{ store, storeSecretId, ttlSeconds, key, keyPrefix }`, or `true` (all from the variables); `key` (a function of the message) and ' +
      "`keyPrefix` (default: the work queue's name) are given in code only ([idempotency](idempotency.md))",
    reader: 'idempotency/in-code.ts: resolveIdempotencyConfig',
    // No override note: `store: 'dynamodb'` in code reads IDEMPOTENCY_STORE (the table the stack names), so the variable is not replaced.
  },
  {
    code: 'idempotency.storeSecretId',
    variable: 'IDEMPOTENCY_STORE_SECRET_ID',
    tier: 'everyday',
    defaultDoc: "none: the URL's own credentials, if any",
    values: 'a Secrets Manager secret name or ARN (deployed: its complete ARN)',
    doc:
      'the Redis store\'s password: the secret holds the password alone, or `{"password": "...", "username": "..."}`. Cached `SECRET_CACHE_SECONDS`, read again when the server refuses the login; ' +
      'refused with a DynamoDB store, a password in the URL, or no store ([Redis password](deploy.md#redis-password-from-aws-secrets-manager))',
    reader: 'idempotency/in-code.ts: resolveIdempotencyConfig',
  },
  {
    code: 'rateLimit.store',
    variable: 'RATE_LIMIT_STORE',
    tier: 'everyday',
    defaultDoc: 'the idempotency store, when it is Redis',
    values: '`redis://…` or `rediss://…`, without a password',
    doc:
      "the Redis holding the queue's token bucket, which makes the limit exact across invocations. A password from a secret comes only with the idempotency store " +
      '(`IDEMPOTENCY_STORE_SECRET_ID`), which then serves both. Unset and no Redis idempotency store: each invocation takes its share',
    reader: 'config/rate-limit.ts: resolveRateLimit',
    check: (env) => resolveRateLimit(env, undefined, '', undefined),
  },
  {
    code: 'deploy',
    tier: 'everyday',
    defaultDoc: "`{ modes: ['pull'] }`",
    values: 'modes, schedule, memory, timeouts, the event batch, alarms, retention',
    doc: 'how the stack deploys the queue ([deploy](deploy.md))',
    reader: 'queues/deploy-options.ts: resolveDeploy',
  },
  {
    variable: 'AMQP_URL',
    tier: 'connection',
    defaultDoc: '`amqp://guest:guest@127.0.0.1:5672`',
    values: '`amqp://` or `amqps://` URLs, comma-separated for a cluster',
    doc:
      'the broker, for local runs and the CLIs (deployed functions use the broker secret instead). Several URLs are tried in turn. Checked at start: the scheme, the port, a URL that parses ' +
      '(percent-encode `@`, `/` and `:` in the user name, password and vhost); the error shows the URL without its password ([TLS](deploy.md#tls-amqps))',
    reader: 'config/amqp-urls.ts: parseAmqpUrls',
  },
  {
    variable: 'AMQP_SECRET_ID',
    tier: 'connection',
    defaultDoc: 'none: `AMQP_URL`',
    values: 'a Secrets Manager secret name or ARN',
    doc: 'the broker credentials from Secrets Manager (the stack sets it): [broker credentials](deploy.md#broker-credentials-from-aws-secrets-manager)',
    reader: 'config/amqp-secret.ts: amqpSecret',
  },
  {
    variable: 'AMQP_HOST',
    tier: 'connection',
    defaultDoc: "the secret's host",
    values: 'a host name',
    doc: 'the broker host, with the broker secret (the stack sets it)',
    reader: 'config/amqp-secret.ts: amqpSecret',
  },
  {
    variable: 'AMQP_VHOST',
    tier: 'connection',
    defaultDoc: '`/`',
    values: 'a vhost name',
    doc: "the vhost, with the broker secret (the stack sets it from the queue's `deploy.virtualHost`)",
    reader: 'config/amqp-secret.ts: amqpSecret',
  },
  {
    variable: 'NODE_EXTRA_CA_CERTS',
    tier: 'connection',
    defaultDoc: 'none',
    values: 'a PEM file',
    doc: "a private CA's certificates: [TLS](deploy.md#tls-amqps)",
    reader: 'Node.js',
  },
  {
    variable: 'FUNCTION_NAME',
    tier: 'stack',
    defaultDoc: "the Lambda function's name, else `boomerang-<name>-<mode>`",
    values: 'a name',
    doc: "the function's name in logs, metrics and park headers (the stack sets it to the function's name, which the alarms watch)",
    reader: 'config/config.ts: functionNameFrom',
  },
];

export { STRUCTURED_OPTIONS };
export type { StructuredOption };
