import { describe, expect, it } from 'vitest';
import type { ConfigInCode } from '../../shared/config/config-in-code.js';
import { type EnvOverride, envOverrides, formatOverrides } from '../../shared/config/env-overrides.js';
import type { Env } from '../../shared/config/env.js';

const SOURCE = 'defineQueue("qa-invoices")';
const at = (option: string): string => `${option} in ${SOURCE}`;

describe('envOverrides', () => {
  it.each<[string, Env, Omit<ConfigInCode, 'source'>, EnvOverride[]]>([
    ['nothing set', {}, { retry: { maxRetries: 5 } }, []],
    ['a variable the file leaves to the environment', { MAX_RETRIES: '3', BATCH_SIZE: '10' }, { retry: { initialDelayMs: 100 } }, []],
    ['a blank variable (unset)', { MAX_RETRIES: '  ' }, { retry: { maxRetries: 5 } }, []],
    [
      'a valid value replaced',
      { MAX_RETRIES: '3' },
      { retry: { maxRetries: 5 } },
      [{ variable: 'MAX_RETRIES', envValue: '3', fileValue: '5', option: at('retry.maxRetries') }],
    ],
    [
      'a negative MAX_RETRIES, still reported',
      { MAX_RETRIES: '-1' },
      { retry: { maxRetries: 5 } },
      [
        {
          variable: 'MAX_RETRIES',
          envValue: '-1',
          fileValue: '5',
          option: at('retry.maxRetries'),
          envValueInvalid: 'MAX_RETRIES must be an integer from 0 to 1000; got "-1"',
        },
      ],
    ],
    [
      'a BACKOFF_INITIAL_MS that is no number',
      { BACKOFF_INITIAL_MS: 'abc' },
      { retry: { initialDelayMs: 1000 } },
      [
        {
          variable: 'BACKOFF_INITIAL_MS',
          envValue: 'abc',
          fileValue: '1000',
          option: at('retry.initialDelayMs'),
          envValueInvalid: 'BACKOFF_INITIAL_MS must be a positive integer; got "abc" (with 0 every retry comes back at once: 0 × the multiplier stays 0)',
        },
      ],
    ],
    [
      "top-level and advanced options, in the table's order, each named where defineQueue takes it",
      { CONCURRENCY: '2', DELAY_MODE: 'exact', BATCH_SIZE: '0', CRASH_LOOP_LIMIT: '3' },
      { delayMode: 'tiers', batchSize: 50, concurrency: 4, crashLoopLimit: 5 },
      [
        {
          variable: 'BATCH_SIZE',
          envValue: '0',
          fileValue: '50',
          option: at('batchSize'),
          envValueInvalid: 'BATCH_SIZE must be an integer from 1 to 2000; got "0"',
        },
        { variable: 'CONCURRENCY', envValue: '2', fileValue: '4', option: at('concurrency') },
        { variable: 'DELAY_MODE', envValue: 'exact', fileValue: '"tiers"', option: at('advanced.delayMode') },
        { variable: 'CRASH_LOOP_LIMIT', envValue: '3', fileValue: '5', option: at('advanced.crashLoopLimit') },
      ],
    ],
    [
      "a rate limit's store, and no note for an idempotency store the stack names",
      { RATE_LIMIT_STORE: 'redis://other:6379', IDEMPOTENCY_STORE: 'dynamodb:stack-table' },
      { rateLimit: { perSecond: 5, store: 'redis://pace:6379' }, idempotency: { store: 'dynamodb' } },
      [{ variable: 'RATE_LIMIT_STORE', envValue: 'redis://other:6379', fileValue: '"redis://pace:6379"', option: at('rateLimit.store') }],
    ],
    [
      'the queues and the rules',
      { WORK_QUEUE: 'orders', PARKING_QUEUE: 'amq.bad', RETRY_RULES: '[' },
      { workQueue: 'qa.invoices', parkingQueue: 'qa.invoices.parked', rules: [] },
      [
        { variable: 'WORK_QUEUE', envValue: 'orders', fileValue: '"qa.invoices"', option: at('workQueue') },
        {
          variable: 'PARKING_QUEUE',
          envValue: 'amq.bad',
          fileValue: '"qa.invoices.parked"',
          option: at('parkingQueue'),
          envValueInvalid: 'PARKING_QUEUE must not start with "amq." (reserved by the broker); got "amq.bad"',
        },
        {
          variable: 'RETRY_RULES',
          envValue: '[',
          fileValue: '[]',
          option: at('rules'),
          envValueInvalid: expect.stringContaining('RETRY_RULES is not valid JSON') as unknown as string,
        },
      ],
    ],
    [
      'the idempotency TTL',
      { IDEMPOTENCY_TTL_SECONDS: '60' },
      { idempotency: { store: 'redis://cache:6379', ttlSeconds: 600 } },
      [{ variable: 'IDEMPOTENCY_TTL_SECONDS', envValue: '60', fileValue: '600', option: at('idempotency.ttlSeconds') }],
    ],
    ['a variable no file option replaces (environment-only)', { IDLE_TIMEOUT_MS: '100', AMQP_URL: 'amqp://h' }, { batchSize: 5 }, []],
  ])('%s', (_case, env, code, expected) => {
    // Act & Assess
    expect(envOverrides(env, { ...code, source: SOURCE })).toEqual(expected);
  });
});

describe('formatOverrides', () => {
  it("names the variable, both values, the option, and why the environment's value would be refused", () => {
    // Prepare
    const overrides = envOverrides({ MAX_RETRIES: '-1', BATCH_SIZE: '10' }, { source: SOURCE, retry: { maxRetries: 5 }, batchSize: 50 });
    // Act & Assess
    expect(formatOverrides(overrides)).toEqual([
      'MAX_RETRIES=-1 is set but not used: retry.maxRetries in defineQueue("qa-invoices") is 5 (and -1 would be refused: MAX_RETRIES must be an integer from 0 to 1000; got "-1")',
      'BATCH_SIZE=10 is set but not used: batchSize in defineQueue("qa-invoices") is 50',
    ]);
  });
});
