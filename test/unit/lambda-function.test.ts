import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../shared/config/config.js';
import { ConfigError } from '../../shared/errors.js';
import { envOverrides } from '../../shared/config/env-overrides.js';
import { createLambdaFunction } from '../../shared/core/lambda-function.js';
import { emptySummary, type Summary } from '../../shared/observability/summary.js';
import { noTracer } from '../../shared/observability/attempt-tracer.js';
import type { InvocationMetrics } from '../../shared/observability/metrics.js';
import { recordingLogger } from '../helpers/fakes.js';

const CONFIG: Config = loadConfig({ AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672', WORK_QUEUE: 'orders', FUNCTION_NAME: 'orders-retry' }, 'boomerang');

/** Metrics that keep what each flush was given. */
function recordingMetrics() {
  const flushes: { summary: Summary; failedWith: string | undefined }[] = [];
  const metrics: InvocationMetrics = {
    handlerError: () => undefined,
    retryDelay: () => undefined,
    flush: (summary, failedWith) => void flushes.push({ summary, failedWith }),
  };
  return { flushes, metrics: () => metrics };
}

const context = (requestId: string) => ({ awsRequestId: requestId, getRemainingTimeInMillis: () => 5000 });

describe('createLambdaFunction', () => {
  it('makes one idempotency guard per container when the config asks for one, again only after making it failed', async () => {
    // Prepare
    const withGuard: Config = loadConfig({ WORK_QUEUE: 'orders', IDEMPOTENCY_STORE: 'redis://cache:6379' }, 'boomerang');
    const made: string[] = [];
    const seen: unknown[] = [];
    const fakeGuard = { run: async () => 'ran' as const, close: async () => undefined };
    const invoke = createLambdaFunction(
      {
        config: withGuard,
        log: recordingLogger('error').log,
        idempotencyGuard: (options) => {
          made.push(options.store.kind);
          if (made.length === 1) throw new ConfigError('POWERTOOLS_IDEMPOTENCY_DISABLED is set');
          return fakeGuard;
        },
      },
      {
        defaultName: 'boomerang',
        loadConfig: () => withGuard,
        run: async ({ idempotency }) => {
          seen.push(idempotency);
          return emptySummary();
        },
      },
    );
    const off = createLambdaFunction(
      {
        config: CONFIG,
        log: recordingLogger('error').log,
        idempotencyGuard: () => {
          throw new Error('never made');
        },
      },
      {
        defaultName: 'boomerang',
        loadConfig: () => CONFIG,
        run: async ({ idempotency }) => {
          seen.push(idempotency);
          return emptySummary();
        },
      },
    );
    // Act
    await expect(invoke({}, context('r-1'))).rejects.toThrow('POWERTOOLS_IDEMPOTENCY_DISABLED');
    await invoke({}, context('r-2'));
    await invoke({}, context('r-3'));
    await off({}, context('r-4'));
    // Assess
    expect(made).toEqual(['redis', 'redis']);
    expect(seen).toEqual([fakeGuard, fakeGuard, undefined]);
  });

  it("makes the container's tracer once, from config.tracing, and hands it to every invocation (off: the no-op one)", async () => {
    // Prepare
    const traced: Config = { ...CONFIG, tracing: 'opentelemetry' };
    const seen: unknown[] = [];
    const run = async ({ tracer }: { tracer: unknown }) => {
      seen.push(tracer);
      return emptySummary();
    };
    const invoke = createLambdaFunction({ config: traced, log: recordingLogger('error').log }, { defaultName: 'boomerang', loadConfig: () => traced, run });
    const off = createLambdaFunction({ config: CONFIG, log: recordingLogger('error').log }, { defaultName: 'boomerang', loadConfig: () => CONFIG, run });
    // Act
    await invoke({}, context('r-1'));
    await invoke({}, context('r-2'));
    await off({}, context('r-3'));
    // Assess
    expect(seen[0]).not.toBe(noTracer);
    expect(seen[1]).toBe(seen[0]);
    expect(seen[2]).toBe(noTracer);
  });

  it('asks the tracer to send its buffered spans at the end of each invocation, a failed one too', async () => {
    // Prepare
    let flushes = 0;
    const tracer = {
      start: noTracer.start,
      flush: async () => {
        flushes++;
      },
    };
    let calls = 0;
    const invoke = createLambdaFunction(
      { config: CONFIG, log: recordingLogger('error').log, tracer },
      {
        defaultName: 'boomerang',
        loadConfig: () => CONFIG,
        run: async () => {
          if (++calls === 2) throw new Error('broker down');
          return emptySummary();
        },
      },
    );
    // Act
    await invoke({}, context('r-1'));
    await expect(invoke({}, context('r-2'))).rejects.toThrow('broker down');
    // Assess
    expect(flushes).toBe(2);
  });

  it("warns once per container, at its first invocation, of the variables set but replaced by the queue's file", async () => {
    // Prepare
    const logger = recordingLogger('warn');
    const env = { MAX_RETRIES: '-1', BATCH_SIZE: '7' };
    const code = { source: 'defineQueue("qa-invoices")', retry: { maxRetries: 5 }, batchSize: 50 };
    const invoke = createLambdaFunction(
      { env, log: logger.log, overrides: (e) => envOverrides(e, code) },
      { defaultName: 'boomerang', loadConfig: () => CONFIG, run: async () => emptySummary() },
    );
    // Act
    await invoke({}, context('r-1'));
    await invoke({}, context('r-2'));
    // Assess
    const warnings = logger.entries().filter((e) => e.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      message: "environment variables set but overridden by the queue's file: their values are not used",
      overrides: [
        { variable: 'MAX_RETRIES', envValue: '-1', fileValue: '5', envValueInvalid: 'MAX_RETRIES must be an integer from 0 to 1000; got "-1"' },
        { variable: 'BATCH_SIZE', envValue: '7', fileValue: '50' },
      ],
    });
  });

  it('reads the config again at the next invocation after a bad one, then keeps it', async () => {
    // Prepare
    let loads = 0;
    const logger = recordingLogger('info');
    const { flushes, metrics } = recordingMetrics();
    const invoke = createLambdaFunction(
      {
        env: {},
        log: logger.log,
        metrics,
        loadConfig: () =>
          ++loads === 1
            ? (() => {
                throw new ConfigError('WORK_QUEUE is empty');
              })()
            : CONFIG,
      },
      {
        defaultName: 'boomerang',
        loadConfig: () => CONFIG,
        fields: (config) => ({ queue: config.workQueue }),
        run: async () => ({ ...emptySummary(), received: 2, acked: 2 }),
      },
    );
    // Act
    const first = invoke({}, context('r-1'));
    await expect(first).rejects.toThrow('WORK_QUEUE is empty');
    await invoke({}, context('r-2'));
    await invoke({}, context('r-3'));
    // Assess
    expect(loads).toBe(2);
    expect(logger.entries().map((e) => [e.message, e.requestId, e.coldStart, e.queue])).toEqual([
      ['invocation summary: ended early', 'r-1', true, undefined],
      ['invocation summary', 'r-2', false, 'orders'],
      ['invocation summary', 'r-3', false, 'orders'],
    ]);
    expect(logger.entries()[0]).toMatchObject({ level: 'error', service: 'boomerang', errorName: 'ConfigError', summary: { stoppedBecause: 'config-error' } });
    expect(flushes.map((f) => [f.failedWith, f.summary.received])).toEqual([
      ['ConfigError', 0],
      [undefined, 2],
      [undefined, 2],
    ]);
  });

  it.each([
    { label: 'the name a declared queue gives', given: { defaultName: 'boomerang-orders-pull' }, env: {}, service: 'boomerang-orders-pull' },
    { label: "the wrapper's own default", given: {}, env: {}, service: 'boomerang' },
    {
      label: 'FUNCTION_NAME before either default',
      given: { defaultName: 'boomerang-orders-pull' },
      env: { FUNCTION_NAME: 'orders-retry' },
      service: 'orders-retry',
    },
  ])('names the service by $label while the config is still unread', async ({ given, env, service }) => {
    // Prepare
    const logger = recordingLogger('info');
    const invoke = createLambdaFunction(
      {
        ...given,
        env,
        log: logger.log,
        metrics: recordingMetrics().metrics,
        loadConfig: () => {
          throw new ConfigError('WORK_QUEUE is empty');
        },
      },
      { defaultName: 'boomerang', loadConfig: () => CONFIG, run: async () => emptySummary() },
    );
    // Act
    await expect(invoke({}, context('r-1'))).rejects.toThrow('WORK_QUEUE is empty');
    // Assess
    expect(logger.entries()[0]).toMatchObject({ service });
  });

  it('logs the summary a failed run carries, flushes it with the error name, and throws the error again', async () => {
    // Prepare
    const logger = recordingLogger('info');
    const { flushes, metrics } = recordingMetrics();
    const carried = { ...emptySummary(), received: 3, retried: 1, stoppedBecause: 'connection-lost' as const };
    const failure = Object.assign(new Error('Lost the connection'), { name: 'PullAbortedError', summary: carried });
    const invoke = createLambdaFunction(
      { config: CONFIG, log: logger.log, metrics },
      { defaultName: 'boomerang', loadConfig: () => CONFIG, run: async () => Promise.reject(failure) },
    );
    // Act
    const invoking = invoke({}, context('r-1'));
    // Assess
    await expect(invoking).rejects.toBe(failure);
    expect(logger.entries()).toEqual([
      expect.objectContaining({ level: 'error', service: 'orders-retry', requestId: 'r-1', coldStart: true, errorName: 'PullAbortedError', summary: carried }),
    ]);
    expect(flushes).toEqual([{ summary: carried, failedWith: 'PullAbortedError' }]);
  });

  it('warns in the summary line when the circuit breaker opened', async () => {
    // Prepare
    const logger = recordingLogger('info');
    const invoke = createLambdaFunction(
      { config: CONFIG, log: logger.log, metrics: recordingMetrics().metrics },
      { defaultName: 'boomerang', loadConfig: () => CONFIG, run: async () => ({ ...emptySummary(), breakerOpened: true }) },
    );
    // Act
    await invoke({}, context('r-1'));
    // Assess
    expect(logger.entries()).toEqual([expect.objectContaining({ level: 'warn', message: 'invocation summary: the circuit breaker opened' })]);
  });
});
