/**
 * The invocation wrapper both function factories share: the config cache, the logger of each
 * invocation (requestId, coldStart, service; Powertools inside Lambda), the metrics, and the one
 * summary line and metrics flush that end every invocation, a failed one included.
 */
import { functionNameFrom, type Config } from '../config/config.js';
import type { Env } from '../config/env.js';
import type { EnvOverride } from '../config/env-overrides.js';
import type { IdempotencyGuard } from '../idempotency/guard.js';
import type { ResolvedIdempotencyOptions } from '../idempotency/options.js';
import type { AttemptTracer } from '../observability/attempt-tracer.js';
import { createLogger, logLevelFrom, type LogFields, type Logger } from '../observability/logger.js';
import { noMetrics, type InvocationMetrics } from '../observability/metrics.js';
import { containerPacing, type Pacer } from './pacer.js';
import { openTracer } from '../observability/open-tracer.js';
import { createLambdaLogger, type LambdaLogger } from '../observability/powertools-logger.js';
import { PowertoolsMetrics } from '../observability/powertools-metrics.js';
import { emptySummary, type StopReason, type Summary } from '../observability/summary.js';

/** What a team may pass to `createPullFunction` or `createEventFunction` (tests pass fakes). */
type FunctionOptions = {
  /** @default loaded from `env` at the first invocation (again at the next one when it was bad) */
  readonly config?: Config;
  /** Where the config is read from when none is given. @default process.env */
  readonly env?: Env;
  /**
   * How the config is read from `env` when none is given (a declared queue passes its own, which puts
   * the options given in code before the environment). @default loadConfig: the environment alone
   */
  readonly loadConfig?: (env: Env) => Config;
  /**
   * The function's name (`service` of logs and metrics, FUNCTION_NAME of the config) when neither
   * FUNCTION_NAME nor AWS_LAMBDA_FUNCTION_NAME is set: a declared queue passes `boomerang-<name>-<mode>`.
   * @default boomerang-pull, boomerang-event
   */
  readonly defaultName?: string;
  /** @default inside Lambda: Powertools Logger (JSON on stdout/stderr); elsewhere: JSON lines on stderr, at LOG_LEVEL */
  readonly log?: Logger;
  /** Metrics of one invocation for the function named `service`. @default Powertools Metrics (EMF on stdout) inside Lambda, none elsewhere */
  readonly metrics?: (service: string) => InvocationMetrics;
  /**
   * Makes the container's idempotency guard from the config's options, once (tests give the DynamoDB
   * client's config for dynalite). @default createIdempotencyGuard, loaded only when idempotency is on
   */
  readonly idempotencyGuard?: (options: ResolvedIdempotencyOptions, log: Logger) => IdempotencyGuard | Promise<IdempotencyGuard>;
  /**
   * Starts a span per attempt. @default made from `config.tracing` once per container, at the first
   * invocation: none when it is `off` (nothing loaded), else the OpenTelemetry or X-Ray tracer
   */
  readonly tracer?: AttemptTracer;
  /**
   * The variables set in `env` that the options in code replace (a declared queue passes its own):
   * logged as one warning at the first invocation of the container, so none is ignored in silence. @default none
   */
  readonly overrides?: (env: Env) => readonly EnvOverride[];
  /**
   * Makes each invocation's pacer from the config (tests give a fake store). @default containerPacing():
   * none without `config.rateLimit`, else the share of the limit or the store's bucket, the store opened once per container
   */
  readonly pacing?: (config: Config, log: Logger) => Pacer | undefined;
};

/** The part of the Lambda context the functions read (Powertools' logger adds the rest it finds). */
type LambdaContext = {
  getRemainingTimeInMillis(): number;
  readonly awsRequestId: string;
};

/** What one invocation runs with. */
type Invocation<E> = {
  readonly config: Config;
  readonly event: E;
  /** Lambda: `getRemainingTimeInMillis()` at the start. */
  readonly budgetMs: number;
  /** Carries `service`, `requestId`, and the spec's `fields`. */
  readonly log: Logger;
  readonly metrics: InvocationMetrics;
  /** The container's guard when `config.idempotency` is set; undefined: idempotency is off. */
  readonly idempotency: IdempotencyGuard | undefined;
  /** The container's tracer (`noTracer` when `config.tracing` is off). */
  readonly tracer: AttemptTracer;
  /** This invocation's pacer when `config.rateLimit` is set; undefined: no limit. */
  readonly pacer: Pacer | undefined;
};

/** What makes one function out of the wrapper. */
type FunctionSpec<E> = {
  /** The function's name when neither the config, FUNCTION_NAME nor AWS_LAMBDA_FUNCTION_NAME gives one. */
  readonly defaultName: string;
  /** How the config is read when `FunctionOptions` gives neither a config nor `loadConfig`. */
  readonly loadConfig: (env: Env) => Config;
  /** Fields each log line and the summary line carry once the config is known. @default none */
  readonly fields?: (config: Config) => LogFields;
  readonly run: (invocation: Invocation<E>) => Promise<Summary>;
};

/**
 * Wraps `spec.run` as a Lambda handler. Config is read once per container, at the first invocation
 * (again at the next one when it was bad). Each invocation gets a logger carrying `service`,
 * `requestId` (and inside Lambda Powertools' context keys), logs one summary line with `coldStart`
 * and flushes its metrics, also when it fails (bad config, broker unreachable), and then throws so
 * that Lambda records the error.
 * @example
 * const handler = createLambdaFunction(options, { defaultName: 'boomerang', loadConfig, run: ({ config, log }) => runPull({ config, log, ... }) });
 */
function createLambdaFunction<E, C extends LambdaContext>(given: FunctionOptions, spec: FunctionSpec<E>): (event: E, context: C) => Promise<Summary> {
  const env = given.env ?? process.env;
  const service = given.config?.functionName ?? functionNameFrom(env, given.defaultName ?? spec.defaultName);
  const inLambda = env.AWS_LAMBDA_FUNCTION_NAME !== undefined;
  // Made at the first invocation: a queue's file makes both its functions, and a bundle runs only one.
  let made: { lambdaLog: LambdaLogger | undefined; log: Logger } | undefined;
  const logs = (): { lambdaLog: LambdaLogger | undefined; log: Logger } => {
    if (made !== undefined) return made;
    const lambdaLog = given.log === undefined && inLambda ? createLambdaLogger({ service }) : undefined;
    // Powertools puts its own `service` key (POWERTOOLS_SERVICE_NAME, else the function's name) on each line.
    made = { lambdaLog, log: lambdaLog ?? (given.log ?? createLogger({ level: logLevelFrom(env.LOG_LEVEL) })).child({ service }) };
    return made;
  };
  const metricsOf = given.metrics ?? (inLambda ? (name: string) => new PowertoolsMetrics({ service: name }) : () => noMetrics);
  let config: Config | undefined = given.config;
  let coldStart = true;
  // One per container, like the config (which is read once): its store client is reused by every invocation.
  let guard: Promise<IdempotencyGuard> | undefined;
  const guardFor = (config: Config): Promise<IdempotencyGuard> | undefined => {
    const options = config.idempotency;
    if (options === undefined) return undefined;
    guard ??= Promise.resolve((given.idempotencyGuard ?? openGuard)(options, logs().log)).catch((error: unknown) => {
      guard = undefined;
      throw error;
    });
    return guard;
  };
  // One per container too: a tracer provider, or the X-Ray SDK's socket, is reused by every invocation.
  let tracer: Promise<AttemptTracer> | undefined = given.tracer === undefined ? undefined : Promise.resolve(given.tracer);
  const tracerFor = (config: Config): Promise<AttemptTracer> => (tracer ??= openTracer(config.tracing, logs().log));
  const pacerFor = given.pacing ?? containerPacing();
  return async (event, context) => {
    const { lambdaLog, log } = logs();
    lambdaLog?.addContext(context);
    const invocation = { log: log.child({ requestId: context.awsRequestId }), metrics: metricsOf(service), coldStart };
    if (coldStart) warnOverrides(log, given.overrides?.(env) ?? []);
    coldStart = false;
    const startedAt = Date.now();
    try {
      config ??= (given.loadConfig ?? spec.loadConfig)(env);
      const current = config;
      const fields = spec.fields?.(current) ?? {};
      const idempotency = await guardFor(current);
      const runLog = invocation.log.child(fields);
      const pacer = pacerFor(current, runLog);
      const summary = await spec.run({
        config: current,
        event,
        budgetMs: context.getRemainingTimeInMillis(),
        log: runLog,
        metrics: invocation.metrics,
        idempotency,
        tracer: await tracerFor(current),
        pacer,
      });
      const line = { coldStart: invocation.coldStart, ...fields, ...(pacer === undefined ? {} : { pacing: pacer.describe() }), summary };
      if (summary.breakerOpened) invocation.log.warn('invocation summary: the circuit breaker opened', line);
      else invocation.log.info('invocation summary', line);
      await invocation.metrics.flush(summary);
      await flushTraces(tracer, invocation.log);
      return summary;
    } catch (error) {
      const summary = summaryOf(error, Date.now() - startedAt);
      const { name, message } = error instanceof Error ? error : { name: 'Error', message: String(error) };
      const fields = config === undefined ? {} : (spec.fields?.(config) ?? {});
      invocation.log.error('invocation summary: ended early', { coldStart: invocation.coldStart, ...fields, summary, errorName: name, reason: message });
      await invocation.metrics.flush(summary, name);
      await flushTraces(tracer, invocation.log);
      throw error;
    }
  };
}

/** Once per container: a variable the queue's file replaces, set all the same, is said, never ignored in silence. */
function warnOverrides(log: Logger, overrides: readonly EnvOverride[]): void {
  if (overrides.length === 0) return;
  log.warn("environment variables set but overridden by the queue's file: their values are not used", { overrides });
}

/** How long the end of an invocation waits for the tracer to send its buffered spans. */
const TRACE_FLUSH_WAIT_MS = 2000;

/** Sends the spans the tracer still holds before Lambda may freeze the process; a slow or failing exporter delays the end by 2 s at most. */
async function flushTraces(tracer: Promise<AttemptTracer> | undefined, log: Logger): Promise<void> {
  const made = await tracer?.catch(() => undefined);
  if (made?.flush === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, TRACE_FLUSH_WAIT_MS);
  });
  try {
    await Promise.race([made.flush(), waited]);
  } catch (error) {
    log.warn('the tracer could not send its spans', { reason: (error as Error).message });
  } finally {
    clearTimeout(timer);
  }
}

/** Loaded on demand: a function with idempotency off never loads Powertools Idempotency nor the store clients. */
async function openGuard(options: ResolvedIdempotencyOptions, log: Logger): Promise<IdempotencyGuard> {
  const { createIdempotencyGuard } = await import('../idempotency/guard.js');
  return createIdempotencyGuard(options, { logger: log });
}

/** The summary an error carries, else an empty one saying why nothing was done. */
function summaryOf(error: unknown, durationMs: number): Summary {
  const carried = (error as { summary?: Summary } | undefined)?.summary;
  if (carried !== undefined) return carried;
  return { ...emptySummary(), durationMs, stoppedBecause: stopReasonOf(error) };
}

/** Why nothing was taken, by error `name` (see errors.ts: a handler bundle may hold another copy of the classes). */
const STOP_REASONS: Readonly<Record<string, StopReason>> = {
  ConfigError: 'config-error',
  TopologyDriftError: 'topology-drift',
  BrokerConnectionError: 'connect-failed',
};

function stopReasonOf(error: unknown): StopReason {
  const name = (error as { name?: unknown } | undefined)?.name;
  return (typeof name === 'string' && Object.hasOwn(STOP_REASONS, name) && STOP_REASONS[name]) || 'failed';
}

export { createLambdaFunction, summaryOf };
export type { FunctionOptions, LambdaContext };
