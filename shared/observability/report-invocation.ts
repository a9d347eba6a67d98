import { functionNameFrom, type Config } from '../config/config.js';
import type { Env } from '../config/env.js';
import { createLogger, logLevelFrom, type LogFields, type Logger } from './logger.js';
import { EmfMetrics, noMetrics, type InvocationMetrics } from './metrics.js';
import { emptySummary, type StopReason, type Summary } from '../engine/summary.js';

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
  /** @default JSON lines on stderr, at LOG_LEVEL */
  readonly log?: Logger;
  /** Metrics of one invocation for the function named `service`. @default EMF on stdout inside Lambda, none elsewhere */
  readonly metrics?: (service: string) => InvocationMetrics;
};

/** One invocation's reporting: where its summary line and metrics go. */
type InvocationReport = {
  /** Carries `requestId` and `service` (the function's name). */
  readonly log: Logger;
  readonly metrics: InvocationMetrics;
  readonly coldStart: boolean;
  /** Fields the summary line adds, read when it is written (the queue, once the config is known). */
  readonly summaryFields?: () => LogFields;
};

/** What a wrapper keeps per container for its reports; `start` makes each invocation's. */
type Reporter = {
  readonly env: Env;
  start(requestId: string, summaryFields?: () => LogFields): InvocationReport;
};

/**
 * The per-container part of a wrapper's reporting: the environment, the function's name (from the
 * config, else FUNCTION_NAME, else AWS_LAMBDA_FUNCTION_NAME, else `defaultName`: known even when the
 * config is bad), a logger carrying it as `service`, and whether the next invocation is the cold start.
 */
function createReporter(given: FunctionOptions, defaultName: string): Reporter {
  const env = given.env ?? process.env;
  const service = given.config?.functionName ?? functionNameFrom(env, defaultName);
  const log = (given.log ?? createLogger({ level: logLevelFrom(env.LOG_LEVEL) })).child({ service });
  const metrics = given.metrics ?? defaultMetrics;
  let coldStart = true;
  return {
    env,
    start(requestId, summaryFields) {
      const report = { log: log.child({ requestId }), metrics: metrics(service), coldStart, summaryFields };
      coldStart = false;
      return report;
    },
  };
}

/** EMF lines on stdout inside Lambda only: a local run keeps stdout for the CLI's summary. */
function defaultMetrics(service: string): InvocationMetrics {
  return process.env.AWS_LAMBDA_FUNCTION_NAME ? new EmfMetrics({ service }) : noMetrics;
}

/**
 * Runs one invocation and, however it ends, writes one summary line and the metrics: a success
 * logs `invocation summary` (warn when the breaker opened); a failure, even a bad config or an
 * unreachable broker, logs `invocation summary: ended early` at error level with the error's name
 * and message, counts `invocationErrors`, and is thrown again so that Lambda records the error.
 */
async function reportInvocation(report: InvocationReport, run: () => Promise<Summary>): Promise<Summary> {
  const startedAt = Date.now();
  try {
    const summary = await run();
    const fields = { coldStart: report.coldStart, ...report.summaryFields?.(), summary };
    if (summary.breakerOpened) report.log.warn('invocation summary: the circuit breaker opened', fields);
    else report.log.info('invocation summary', fields);
    report.metrics.flush(summary);
    return summary;
  } catch (error) {
    const summary = summaryOf(error, Date.now() - startedAt);
    const { name, message } = error instanceof Error ? error : { name: 'Error', message: String(error) };
    report.log.error('invocation summary: ended early', { coldStart: report.coldStart, ...report.summaryFields?.(), summary, errorName: name, reason: message });
    report.metrics.flush(summary, name);
    throw error;
  }
}

/** The summary an error carries, else an empty one saying why nothing was done. */
function summaryOf(error: unknown, durationMs: number): Summary {
  const carried = (error as { summary?: Summary } | undefined)?.summary;
  if (carried !== undefined) return carried;
  return { ...emptySummary(), durationMs, stoppedBecause: stopReasonOf(error) };
}

/** Why nothing was taken, by error `name` (see errors.ts: a handler bundle may hold another copy of the classes). */
const STOP_REASONS: Readonly<Record<string, StopReason>> = { ConfigError: 'config-error', TopologyDriftError: 'topology-drift', BrokerConnectionError: 'connect-failed' };

function stopReasonOf(error: unknown): StopReason {
  const name = (error as { name?: unknown } | undefined)?.name;
  return (typeof name === 'string' && Object.hasOwn(STOP_REASONS, name) && STOP_REASONS[name]) || 'failed';
}

export { createReporter, defaultMetrics, reportInvocation, stopReasonOf };
export type { FunctionOptions, InvocationReport, Reporter };
