import { beforeAll, describe, expect, it } from 'vitest';
import { checkFunctionEnvironment } from '../../shared/cdk/function-environment.js';
import { ConfigError } from '../../shared/errors.js';
import { defineQueue } from '../../shared/queues/define-queue.js';
import { type DeclaredQueue, loadDeclaredQueues } from '../../shared/queues/declared-queues.js';

let queues: DeclaredQueue[];

beforeAll(async () => {
  queues = await loadDeclaredQueues({ env: {} });
});

/** Checks `extra` against each queue declared in functions/ (partner-sync first), as the construct's child process does. */
function check(extra: Record<string, string>) {
  return queues.map((queue) => checkFunctionEnvironment(queue, extra));
}

/** The message of what `check(extra)` throws. */
function refusal(extra: Record<string, string>): string {
  try {
    check(extra);
  } catch (error) {
    return (error as Error).message;
  }
  return '';
}

describe('Function: checkFunctionEnvironment', () => {
  it("reads the timings each queue's functions would: HTTP_TIMEOUT_MS and the safety margin", () => {
    // Act & Assess
    expect(check({}).map((reading) => reading.timings)).toEqual([
      { httpTimeoutMs: 10_000, safetyMarginMs: 3000 },
      { httpTimeoutMs: 10_000, safetyMarginMs: 3000 },
    ]);
    expect(check({ HTTP_TIMEOUT_MS: '5000' })[0]?.timings.httpTimeoutMs).toBe(5000);
  });

  // Since 13.7: functionEnvironment through the functions' parsers, stack-owned variables, a password
  // in AMQP_URL, amq.* names; and what would weaken every function or put a password in the template.
  it.each([
    [
      '13.7',
      { CONNECT_TIMEOUT_MS: 'abc' },
      'functionEnvironment: CONNECT_TIMEOUT_MS must be an integer from 100 to 120000; got "abc" (the functions of partner-sync would refuse to start with it)',
    ],
    ['13.7', { BREAKER_THRESHOLD: '-1' }, 'functionEnvironment: BREAKER_THRESHOLD must be an integer'],
    ['13.7', { IDLE_TIMEOUT_MS: '2' }, 'functionEnvironment: IDLE_TIMEOUT_MS must be an integer from 10 to 60000; got "2"'],
    ['13.7', { HTTP_TIMEOUT_MS: 'soon' }, 'functionEnvironment: HTTP_TIMEOUT_MS must be an integer from 1 to 2147483647; got "soon"'],
    ['13.7', { EXACT_DELAY_PREFIX: 'amq.delay' }, 'functionEnvironment: EXACT_DELAY_PREFIX must not start with "amq."'],
    [
      '13.7',
      { WORK_QUEUE: 'orders' },
      'functionEnvironment must not set WORK_QUEUE: each queue names its work queue in its functions/<name>.ts (workQueue in defineQueue)',
    ],
    ['13.7', { PARKING_QUEUE: 'orders.parked' }, 'functionEnvironment must not set PARKING_QUEUE: each queue names its parking lot in its functions/<name>.ts'],
    ['13.7', { AMQP_VHOST: 'prod' }, 'functionEnvironment must not set AMQP_VHOST'],
    ['13.7', { AMQP_SECRET_ID: 'other' }, 'functionEnvironment must not set AMQP_SECRET_ID'],
    ['13.7', { POWERTOOLS_SERVICE_NAME: 'x' }, 'functionEnvironment must not set POWERTOOLS_SERVICE_NAME'],
    [
      '13.7',
      { AMQP_URL: 'amqps://app:s3cret@b-1.mq.eu-west-1.amazonaws.com:5671' },
      'functionEnvironment must not hold a password in AMQP_URL (amqps://app:***@b-1.mq.eu-west-1.amazonaws.com:5671)',
    ],
    [
      '13.7',
      { AMQP_URL: 'amqps://b-1.mq.eu-west-1.amazonaws.com:5671' },
      'functionEnvironment must not set AMQP_URL: the deployed functions connect with the broker secret',
    ],
    [
      'security',
      { NODE_TLS_REJECT_UNAUTHORIZED: '0' },
      'functionEnvironment must not set NODE_TLS_REJECT_UNAUTHORIZED: with 0, Node checks no TLS certificate on any connection of the functions',
    ],
    ['security', { NODE_TLS_REJECT_UNAUTHORIZED: '1' }, 'functionEnvironment must not set NODE_TLS_REJECT_UNAUTHORIZED'],
    [
      'security',
      { NODE_OPTIONS: '--require /tmp/hook.js' },
      'functionEnvironment must not set NODE_OPTIONS to "--require /tmp/hook.js": it can load code into every function before its handler (--require, --import) or weaken its TLS (--tls-min-v1.0, --tls-cipher-list). The one value accepted is --enable-source-maps',
    ],
    [
      'security',
      { NODE_OPTIONS: '--enable-source-maps --import=./x.mjs' },
      'functionEnvironment must not set NODE_OPTIONS to "--enable-source-maps --import=./x.mjs"',
    ],
    [
      'security',
      { IDEMPOTENCY_STORE: 'redis://:s3cret@cache.internal:6379' },
      'functionEnvironment must not hold a password in IDEMPOTENCY_STORE (redis://:***@cache.internal:6379): it would be readable in the template and the function configuration',
    ],
    [
      'security',
      { IDEMPOTENCY_STORE: 'rediss://default:s3cret@cache.internal:6380' },
      'functionEnvironment must not hold a password in IDEMPOTENCY_STORE (rediss://default:***@cache.internal:6380)',
    ],
    [
      'security',
      { IDEMPOTENCY_STORE: 'redis://cache.internal:6379?password=s3cret' },
      'functionEnvironment must not hold a password in IDEMPOTENCY_STORE (redis://cache.internal:6379?password=***)',
    ],
    [
      'security',
      { IDEMPOTENCY_STORE: 'redis://:s3cret@cache.internal:6379' },
      'Put the password in a Secrets Manager secret (the password alone, or {"password": "...", "username": "..."}), name it by its complete ARN with IDEMPOTENCY_STORE_SECRET_ID in functionEnvironment (or idempotency.storeSecretId in the queue\'s functions/<name>.ts), and remove the password from IDEMPOTENCY_STORE',
    ],
    [
      'redis secret',
      { IDEMPOTENCY_STORE: 'rediss://cache.internal:6380', IDEMPOTENCY_STORE_SECRET_ID: 'boomerang/redis' },
      'The Redis password secret of partner-sync is "boomerang/redis"; deployed, it must be the secret\'s complete ARN',
    ],
    [
      'redis secret',
      {
        IDEMPOTENCY_STORE: 'rediss://cache.internal:6380',
        IDEMPOTENCY_STORE_SECRET_ID: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/redis',
      },
      "must be the secret's complete ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>-AbCdEf",
    ],
    [
      'redis secret',
      { IDEMPOTENCY_STORE_SECRET_ID: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/redis-AbCdEf' },
      'functionEnvironment: IDEMPOTENCY_STORE_SECRET_ID is set but IDEMPOTENCY_STORE is not',
    ],
    [
      'redis secret',
      { IDEMPOTENCY_STORE: 'dynamodb:orders-idem', IDEMPOTENCY_STORE_SECRET_ID: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/redis-AbCdEf' },
      'functionEnvironment: IDEMPOTENCY_STORE_SECRET_ID names a Redis password secret (arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/redis-AbCdEf), but IDEMPOTENCY_STORE is a DynamoDB table (dynamodb:orders-idem)',
    ],
    [
      'redis secret',
      {
        IDEMPOTENCY_STORE: 'rediss://app@cache.internal:6380?password=s3cret',
        IDEMPOTENCY_STORE_SECRET_ID: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/redis-AbCdEf',
      },
      'functionEnvironment must not hold a password in IDEMPOTENCY_STORE (rediss://app@cache.internal:6380?password=***)',
    ],
  ])('rejects (%s) %j, naming functionEnvironment and what to do', (_topic, functionEnvironment, message) => {
    // Act & Assess
    expect(() => check(functionEnvironment)).toThrow(ConfigError);
    expect(() => check(functionEnvironment)).toThrow(message);
  });

  it.each([
    ['NODE_OPTIONS=--enable-source-maps, the way docs/deploy.md gives for file-and-line traces', { NODE_OPTIONS: '--enable-source-maps' }],
    ['NODE_OPTIONS=--enable-source-maps with spaces around it', { NODE_OPTIONS: ' --enable-source-maps ' }],
    ['a Redis store without a password', { IDEMPOTENCY_STORE: 'rediss://cache.internal:6380' }],
    ['a Redis store with a user and no password', { IDEMPOTENCY_STORE: 'redis://app@cache.internal:6379' }],
  ])('accepts %s', (_name, functionEnvironment) => {
    // Act & Assess
    expect(() => check(functionEnvironment)).not.toThrow();
  });

  it('lets every queue read the Redis password secret that functionEnvironment names by its complete ARN', () => {
    // Prepare
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/redis-AbCdEf';
    // Act
    const readings = check({ IDEMPOTENCY_STORE: 'rediss://cache.internal:6380', IDEMPOTENCY_STORE_SECRET_ID: arn });
    // Assess
    expect(readings.map((r) => r.storeSecretArn)).toEqual([arn, arn]);
    expect(check({}).map((r) => r.storeSecretArn)).toEqual([undefined, undefined]);
  });

  it("reads a rate limit's store from the queue's file as from functionEnvironment, so the stack derives RATE_LIMIT_SHARES alike", () => {
    // Prepare
    const { queue } = defineQueue({
      name: 'paced',
      handler: async () => undefined,
      workQueue: 'paced',
      rateLimit: { perSecond: 5, store: 'redis://pace:6379' },
    });
    const unstored = defineQueue({ name: 'paced', handler: async () => undefined, workQueue: 'paced', rateLimit: { perSecond: 5 } }).queue;
    // Act, Assess
    expect(checkFunctionEnvironment(queue, {}).rateLimit).toEqual({ perSecond: 5, store: true });
    expect(checkFunctionEnvironment(unstored, { RATE_LIMIT_STORE: 'redis://pace:6379' }).rateLimit).toEqual({ perSecond: 5, store: true });
    expect(checkFunctionEnvironment(unstored, {}).rateLimit).toEqual({ perSecond: 5, store: false });
  });

  it('never repeats the password of an IDEMPOTENCY_STORE in its error', () => {
    // Act
    const messages = ['redis://:s3cret@cache:6379', 'redis://cache:6379?db=1&password=s3cret'].map((url) => refusal({ IDEMPOTENCY_STORE: url }));
    // Assess
    for (const message of messages) {
      expect(message).toMatch(/password in IDEMPOTENCY_STORE/);
      expect(message).not.toContain('s3cret');
    }
  });

  it('never repeats the password of an AMQP_URL in its error', () => {
    // Act
    const message = refusal({ AMQP_URL: 'amqp://app:s3cret@host-a,amqp://app:s3cret@host-b' });
    // Assess
    expect(message).toMatch(/password in AMQP_URL/);
    expect(message).not.toContain('s3cret');
  });
});
