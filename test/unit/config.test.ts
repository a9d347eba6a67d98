import { describe, expect, it } from 'vitest';
import { DEFAULTS, loadConfig, topologyOptionsFromConfig, type Config } from '../../shared/config/config.js';
import type { Env } from '../../shared/config/env.js';
import type { ConfigError } from '../../shared/errors.js';
import { configErrorOf } from '../helpers/config-error.js';

/** The error `loadConfig` throws for `env`; fails the test when it does not throw. */
function configError(env: Env): ConfigError {
  return configErrorOf(() => loadConfig(env), `loadConfig accepted ${JSON.stringify(env)}`);
}

const RULES = JSON.stringify([
  { match: { errorName: 'ValidationError' }, retry: false },
  { match: { messageType: 'PartnerB' }, maxRetries: 10, maxDelayMs: 7_200_000 },
]);

describe('loadConfig', () => {
  it('uses the defaults when the environment is empty', () => {
    // Act
    const config = loadConfig({});
    // Assess
    expect(config).toEqual({
      amqpUrls: ['amqp://guest:guest@127.0.0.1:5672'],
      workQueue: 'boomerang.work',
      parkingQueue: 'boomerang.work.parked',
      delayMode: 'tiers',
      delayResolutionMs: 1000,
      exactDelayPrefix: 'boomerang.delay',
      queueType: 'quorum',
      retryHeader: 'x-retry-no',
      policy: { maxRetries: 5, initialDelayMs: 1000, multiplier: 2, maxDelayMs: 3_600_000, jitter: 0.1 },
      rules: [],
      ackOrder: 'publish-then-ack',
      batchSize: 100,
      maxMessages: 10_000,
      concurrency: 8,
      attemptTimeoutMs: undefined,
      connectTimeoutMs: 5000,
      publishTimeoutMs: 10_000,
      maxMessageBytes: 16_777_216,
      idleTimeoutMs: 500,
      safetyMarginMs: 3000,
      budgetMs: 60_000,
      functionName: 'boomerang-pull',
      amqpSecret: undefined,
      breakerThreshold: 10,
      crashLoopLimit: 10,
      tracing: 'off',
    } satisfies Config);
  });

  it('reads the Secrets Manager variables', () => {
    // Act
    const config = loadConfig({
      AMQP_SECRET_ID: 'arn:aws:secretsmanager:eu-west-1:1:secret:mq',
      AMQP_HOST: 'b-1.mq.example.com',
      AMQP_PORT: '5671',
      AMQP_VHOST: 'prod',
      SECRET_CACHE_SECONDS: '60',
    });
    // Assess
    expect(config.amqpSecret).toEqual({
      secretId: 'arn:aws:secretsmanager:eu-west-1:1:secret:mq',
      host: 'b-1.mq.example.com',
      port: 5671,
      vhost: 'prod',
      tls: true,
      cacheSeconds: 60,
    });
    expect(loadConfig({ AMQP_SECRET_ID: 's', AMQP_TLS: 'false' }).amqpSecret).toMatchObject({
      host: undefined,
      port: undefined,
      vhost: '/',
      tls: false,
      cacheSeconds: 300,
    });
  });

  it.each([
    [{ AMQP_SECRET_ID: 's', AMQP_PORT: '70000' }, 'AMQP_PORT'],
    [{ AMQP_SECRET_ID: 's', AMQP_TLS: 'yes' }, 'AMQP_TLS'],
    [{ AMQP_SECRET_ID: 's', SECRET_CACHE_SECONDS: '-1' }, 'SECRET_CACHE_SECONDS'],
    [{ BREAKER_THRESHOLD: 'ten' }, 'BREAKER_THRESHOLD'],
    [{ MAX_MESSAGE_BYTES: '0' }, 'MAX_MESSAGE_BYTES'],
    [{ MAX_MESSAGE_BYTES: '600000000' }, 'MAX_MESSAGE_BYTES'],
    [{ CRASH_LOOP_LIMIT: '-1' }, 'CRASH_LOOP_LIMIT'],
    [{ TRACING: 'zipkin' }, 'TRACING must be one of off, opentelemetry, xray; got "zipkin"'],
  ])('rejects %j naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(variable);
  });

  it.each([
    [{}, 'boomerang-event', 'boomerang-event'],
    [{ AWS_LAMBDA_FUNCTION_NAME: 'orders-event' }, 'boomerang-event', 'orders-event'],
    [{ AWS_LAMBDA_FUNCTION_NAME: 'orders-event', FUNCTION_NAME: 'orders' }, 'boomerang-event', 'orders'],
  ])('names the function from %j, else the default it is given (%s)', (env, fallback, expected) => {
    expect(loadConfig(env, fallback).functionName).toBe(expected);
  });

  it('treats a blank variable as unset', () => {
    expect(loadConfig({ MAX_RETRIES: '  ', WORK_QUEUE: '', ACK_ORDER: ' ' })).toEqual(loadConfig({}));
  });

  it('parses every variable', () => {
    // Prepare
    const env: Env = {
      AMQP_URL: ' amqps://app:pw@mq-1.example.com:5671/prod , amqps://app:pw@mq-2.example.com:5671/prod,',
      WORK_QUEUE: 'orders',
      PARKING_QUEUE: 'orders.dead',
      DELAY_MODE: 'exact',
      DELAY_RESOLUTION_MS: '250',
      EXACT_DELAY_PREFIX: 'orders.delay',
      QUEUE_TYPE: 'classic',
      RETRY_HEADER: 'attempt-no',
      MAX_RETRIES: '7',
      BACKOFF_INITIAL_MS: '500',
      BACKOFF_MULTIPLIER: '1.5',
      BACKOFF_MAX_MS: '60000',
      BACKOFF_JITTER: '0.25',
      RETRY_RULES: RULES,
      ACK_ORDER: 'ack-then-publish',
      BATCH_SIZE: '2000',
      MAX_MESSAGES: '50',
      CONCURRENCY: '4',
      CONNECT_TIMEOUT_MS: '1500',
      PUBLISH_TIMEOUT_MS: '2500',
      MAX_MESSAGE_BYTES: '134217728',
      IDLE_TIMEOUT_MS: '100',
      SAFETY_MARGIN_MS: '0',
      BUDGET_MS: '900000',
      FUNCTION_NAME: 'orders-retry',
      CRASH_LOOP_LIMIT: '0',
    };
    // Act
    const config = loadConfig(env);
    // Assess
    expect(config).toMatchObject({
      amqpUrls: ['amqps://app:pw@mq-1.example.com:5671/prod', 'amqps://app:pw@mq-2.example.com:5671/prod'],
      workQueue: 'orders',
      parkingQueue: 'orders.dead',
      delayMode: 'exact',
      delayResolutionMs: 250,
      exactDelayPrefix: 'orders.delay',
      queueType: 'classic',
      retryHeader: 'attempt-no',
      policy: { maxRetries: 7, initialDelayMs: 500, multiplier: 1.5, maxDelayMs: 60_000, jitter: 0.25 },
      ackOrder: 'ack-then-publish',
      batchSize: 2000,
      maxMessages: 50,
      concurrency: 4,
      connectTimeoutMs: 1500,
      publishTimeoutMs: 2500,
      maxMessageBytes: 134_217_728,
      idleTimeoutMs: 100,
      safetyMarginMs: 0,
      budgetMs: 900_000,
      functionName: 'orders-retry',
      crashLoopLimit: 0,
    });
    expect(config.rules.map((r) => [r.index, r.retry, r.policy.maxRetries, r.policy.maxDelayMs])).toEqual([
      [0, false, 7, 60_000],
      [1, true, 10, 7_200_000],
    ]);
  });

  it('refuses a CRASH_LOOP_LIMIT the broker would never let it reach, saying why', () => {
    expect(loadConfig({ CRASH_LOOP_LIMIT: '20' }).crashLoopLimit).toBe(20);
    expect(() => loadConfig({ CRASH_LOOP_LIMIT: '21' })).toThrow(
      'CRASH_LOOP_LIMIT must be from 0 (off) to 20, got 21: 4.x quorum queues drop a message returned more often',
    );
  });

  it('names the parking queue after the work queue by default', () => {
    expect(loadConfig({ WORK_QUEUE: 'orders' }).parkingQueue).toBe('orders.parked');
  });

  it.each([
    [{ FUNCTION_NAME: 'mine', AWS_LAMBDA_FUNCTION_NAME: 'lambda' }, 'mine'],
    [{ AWS_LAMBDA_FUNCTION_NAME: 'lambda' }, 'lambda'],
    [{}, DEFAULTS.functionName],
  ])('takes the function name from %j', (env, expected) => {
    expect(loadConfig(env).functionName).toBe(expected);
  });

  it.each([
    [{ MAX_RETRIES: 'abc' }, ['MAX_RETRIES', '"abc"']],
    [{ MAX_RETRIES: '-1' }, ['MAX_RETRIES', '"-1"']],
    [{ MAX_RETRIES: '1001' }, ['MAX_RETRIES', '"1001"']],
    [{ BATCH_SIZE: '0' }, ['BATCH_SIZE', '"0"']],
    [{ BATCH_SIZE: '2001' }, ['BATCH_SIZE', '"2001"']],
    [{ BATCH_SIZE: '1.5' }, ['BATCH_SIZE', '"1.5"']],
    [{ MAX_MESSAGES: '0' }, ['MAX_MESSAGES', '"0"']],
    [{ CONCURRENCY: '1e3' }, ['CONCURRENCY', '"1e3"']],
    [{ DELAY_MODE: 'fast' }, ['DELAY_MODE', '"fast"']],
    [{ DELAY_RESOLUTION_MS: '5' }, ['DELAY_RESOLUTION_MS', '"5"']],
    [{ QUEUE_TYPE: 'stream' }, ['QUEUE_TYPE', '"stream"']],
    [{ BACKOFF_INITIAL_MS: 'soon' }, ['BACKOFF_INITIAL_MS', '"soon"']],
    [{ BACKOFF_MULTIPLIER: '0.5' }, ['BACKOFF_MULTIPLIER', '"0.5"']],
    [{ BACKOFF_MAX_MS: '0' }, ['BACKOFF_MAX_MS', '"0"']],
    [{ BACKOFF_JITTER: '1.5' }, ['BACKOFF_JITTER', '"1.5"']],
    [{ ACK_ORDER: 'x' }, ['ACK_ORDER', '"x"']],
    [{ CONNECT_TIMEOUT_MS: '99' }, ['CONNECT_TIMEOUT_MS', '"99"']],
    [{ PUBLISH_TIMEOUT_MS: 'ten' }, ['PUBLISH_TIMEOUT_MS', '"ten"']],
    [{ IDLE_TIMEOUT_MS: '60001' }, ['IDLE_TIMEOUT_MS', '"60001"']],
    [{ SAFETY_MARGIN_MS: '-1' }, ['SAFETY_MARGIN_MS', '"-1"']],
    [{ BUDGET_MS: '99' }, ['BUDGET_MS', '"99"']],
    // JSON.parse does not echo the text; the position says where it breaks.
    [{ RETRY_RULES: '{not json' }, ['RETRY_RULES', 'not valid JSON', 'position 1']],
    [{ RETRY_RULES: '{"match":{"errorName":"E"}}' }, ['RETRY_RULES', 'array']],
    [{ RETRY_RULES: '[{"match":{}}]' }, ['RETRY_RULES[0]', '`match`', 'empty']],
    [{ RETRY_RULES: '[{"match":{"errorName":"E"},"maxRetries":-1}]' }, ['RETRY_RULES[0]', 'maxRetries', '-1']],
    [{ WORK_QUEUE: 'amq.foo' }, ['WORK_QUEUE', '"amq.foo"']],
    [{ WORK_QUEUE: 'q'.repeat(300) }, ['WORK_QUEUE', '300 bytes']],
    [{ PARKING_QUEUE: 'amq.parked' }, ['PARKING_QUEUE', '"amq.parked"']],
    [{ EXACT_DELAY_PREFIX: 'amq.delay' }, ['EXACT_DELAY_PREFIX', '"amq.delay"']],
    [{ WORK_QUEUE: 'orders', PARKING_QUEUE: 'orders' }, ['PARKING_QUEUE', 'WORK_QUEUE', '"orders"']],
    [{ AMQP_URL: 'http://x' }, ['AMQP_URL', '"http://x"']],
    [{ AMQP_URL: ' , ' }, ['AMQP_URL', 'no URL']],
    // amqplib reads a URL with a bad port as one with no protocol: "Expected amqp: or amqps: as the protocol".
    [{ AMQP_URL: 'amqp://guest:pw@127.0.0.1:567200' }, ['AMQP_URL', 'port "567200"', '"amqp://guest:***@127.0.0.1:567200"', 'from 1 to 65535', '5672']],
    [{ AMQP_URL: 'amqp://guest:pw@127.0.0.1:0' }, ['AMQP_URL', 'port "0"', 'from 1 to 65535']],
    [{ AMQP_URL: 'amqps://app:pw@mq:5671x/prod' }, ['AMQP_URL', 'port "5671x"', '"amqps://app:***@mq:5671x/prod"']],
    [{ AMQP_URL: 'amqp://guest:pw@mq:-1' }, ['AMQP_URL', 'port "-1"']],
    [{ AMQP_URL: 'amqp://guest:pw@[::1]:70000' }, ['AMQP_URL', 'port "70000"', '[::1]']],
    [{ AMQP_URL: 'amqps://app:pw@mq-1:5671, amqps://app:pw@mq-2:port' }, ['AMQP_URL', 'port "port"', '"amqps://app:***@mq-2:port"']],
    [{ AMQP_URL: 'amqp://app:pw@mq host:5672' }, ['AMQP_URL', '"amqp://app:***@mq host:5672"', 'not a valid URL']],
    [
      { MANAGEMENT_URL: 'amqps://b-1.mq.eu-west-1.amazonaws.com:5671' },
      ['MANAGEMENT_URL', 'an http:// or https:// URL', '"amqps://b-1.mq.eu-west-1.amazonaws.com:5671"'],
    ],
    // The API logs in as the broker's user: a URL holding credentials is refused, without its password.
    [{ MANAGEMENT_URL: 'https://admin:s3cret@mq.example.com' }, ['MANAGEMENT_URL', 'without a user, password', '"https://admin:***@mq.example.com"']],
    [{ RETRY_HEADER: 'x-death' }, ['RETRY_HEADER', '"x-death"', 'the broker owns that namespace']],
    [{ RETRY_HEADER: 'X-Delivery-Count' }, ['RETRY_HEADER', '"X-Delivery-Count"', 'the broker owns that namespace']],
    [{ RETRY_HEADER: 'x-my-count' }, ['RETRY_HEADER', '"x-my-count"', 'retry-no']],
    [{ RETRY_HEADER: 'boomerang-attempts' }, ['RETRY_HEADER', '"boomerang-attempts"']],
    [{ RETRY_HEADER: 'CC' }, ['RETRY_HEADER', '"CC"']],
    [{ BACKOFF_INITIAL_MS: '0' }, ['BACKOFF_INITIAL_MS', '"0"', 'comes back at once']],
    [{ RETRY_RULES: '[{"match":{"errorName":"E"},"initialDelayMs":0}]' }, ['RETRY_RULES[0]', 'initialDelayMs', 'comes back at once']],
    // A multiplier barely above 1 makes almost every one of 1000 retries a new delay, so a new queue.
    [
      { MAX_RETRIES: '1000', BACKOFF_MULTIPLIER: '1.01' },
      ['would plan 824 delay queues', "'boomerang.work'", 'limit of 100', 'MAX_RETRIES', 'BACKOFF_MULTIPLIER', 'DELAY_MODE=exact'],
    ],
    [
      { RETRY_RULES: JSON.stringify(Array.from({ length: 12 }, (_, i) => ({ match: { errorName: `E${i}` }, initialDelayMs: 1000 + i, maxRetries: 10 }))) },
      ['would plan', 'RETRY_RULES'],
    ],
  ])('throws a ConfigError naming the variable and value for %j', (env, fragments) => {
    // Act
    const error = configError(env);
    // Assess
    for (const fragment of fragments) expect(error.message).toContain(fragment);
  });

  it.each([
    'http://user:s3cret@mq.example.com',
    'amqp:/user:s3cret@mq.example.com',
    'amqp:///user:s3cret@mq.example.com',
    'user:s3cret@mq.example.com',
    // A comma in the password splits the value into two "URLs".
    'amqp://user:pa,s3cret@mq.example.com',
    'amqps://user:s3cret@mq-1.example.com,ftp://user:s3cret@mq-2.example.com',
    // No host: "s3cret" stands where a port would.
    'amqp://user:s3cret',
    'amqp://user:s3cret@mq.example.com:x',
    'amqp://user:s3cret@mq example.com',
  ])('never shows the password of a bad AMQP_URL: %s', (url) => {
    // Act
    const error = configError({ AMQP_URL: url });
    // Assess
    expect(error.message).toContain('AMQP_URL');
    expect(error.message).not.toContain('s3cret');
  });

  it.each(['x-retry-no', 'retry-no', 'attempt'])('accepts RETRY_HEADER=%s', (name) => {
    expect(loadConfig({ RETRY_HEADER: name }).retryHeader).toBe(name);
  });

  it('accepts a policy of exactly 100 delay queues', () => {
    // Prepare: 1 ms doubling up to 2^99 is not possible, so use distinct rule delays: 1 tier each.
    const rules = Array.from({ length: 99 }, (_, i) => ({ match: { errorName: `E${i}` }, initialDelayMs: 10_000 + i, maxRetries: 1, maxDelayMs: 10_000 + i }));
    // Act
    const config = loadConfig({ MAX_RETRIES: '1', BACKOFF_INITIAL_MS: '1000', BACKOFF_MAX_MS: '1000', RETRY_RULES: JSON.stringify(rules) });
    // Assess
    expect(topologyOptionsFromConfig(config).tierDelaysMs).toHaveLength(100);
  });

  it('returns a frozen config', () => {
    // Act
    const config = loadConfig({ RETRY_RULES: RULES });
    // Assess
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.policy)).toBe(true);
    expect(() => Object.assign(config, { workQueue: 'other' })).toThrow(TypeError);
  });
});

describe('topologyOptionsFromConfig', () => {
  it('derives the tiers and names from the base policy', () => {
    // Prepare
    const config = loadConfig({
      WORK_QUEUE: 'orders',
      DELAY_MODE: 'exact',
      QUEUE_TYPE: 'classic',
      DELAY_RESOLUTION_MS: '100',
      EXACT_DELAY_PREFIX: 'test.delay',
    });
    // Act
    const options = topologyOptionsFromConfig(config);
    // Assess
    expect(options).toEqual({
      workQueue: 'orders',
      parkingQueue: 'orders.parked',
      delayMode: 'exact',
      queueType: 'classic',
      tierDelaysMs: [1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 512_000, 1_024_000, 2_048_000, 3_600_000],
      delayResolutionMs: 100,
      exactNamePrefix: 'test.delay',
      maxDelayMs: 3_600_000,
    });
  });

  it.each([
    [
      'a rule with a longer initial delay adds its tiers',
      { initialDelayMs: 60_000, maxRetries: 2 },
      [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 64_000, 120_000, 128_000, 256_000, 512_000, 1_024_000, 2_048_000, 3_600_000],
    ],
    [
      'a rule that never retries adds none',
      { initialDelayMs: 500_000, retry: false },
      [1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 512_000, 1_024_000, 2_048_000, 3_600_000],
    ],
    [
      'a rule with the same delays adds none',
      { maxRetries: 3 },
      [1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 512_000, 1_024_000, 2_048_000, 3_600_000],
    ],
  ])('%s', (_name, rule, expected) => {
    // Prepare
    const config = loadConfig({ RETRY_RULES: JSON.stringify([{ match: { errorName: 'E' }, ...rule }]) });
    // Act
    const options = topologyOptionsFromConfig(config);
    // Assess
    expect(options.tierDelaysMs).toEqual(expected);
  });

  it.each([
    [[{ maxDelayMs: 7_200_000 }, { maxDelayMs: 600_000 }], 7_200_000],
    [[{ maxDelayMs: 600_000 }], 3_600_000],
  ])('takes the longest maxDelayMs of the base policy and the rules %j', (overrides, expected) => {
    // Prepare
    const rules = overrides.map((o, i) => ({ match: { errorName: `E${i}` }, initialDelayMs: 1000, ...o }));
    const config = loadConfig({ RETRY_RULES: JSON.stringify(rules) });
    // Act
    const options = topologyOptionsFromConfig(config);
    // Assess
    expect(options.maxDelayMs).toBe(expected);
  });
});
