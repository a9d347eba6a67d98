import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import type { ConstructorOptions } from '@aws-lambda-powertools/logger/types';
import { jsonSafe, type LogFields, type Logger } from './logger.js';
import { redactText } from './redact.js';

/** The Lambda context fields Powertools adds to each line (`function_request_id`, `cold_start`, ...). */
type LambdaContextLike = { readonly awsRequestId: string };

/** Our {@link Logger} port on Powertools, plus the step that gives it each invocation's Lambda context. */
type LambdaLogger = Logger & { addContext(context: LambdaContextLike): void };

/** Powertools' DEBUG threshold: at or below it, debug lines are written. */
const POWERTOOLS_DEBUG = 8;

/**
 * A {@link Logger} that writes through Powertools for AWS Lambda's Logger: its JSON keys (`level`,
 * `message`, `timestamp`, `service`, and with `addContext` `function_request_id`, `cold_start`,
 * `function_name`, ...), its level from AWS_LAMBDA_LOG_LEVEL, POWERTOOLS_LOG_LEVEL or LOG_LEVEL, and
 * its service from POWERTOOLS_SERVICE_NAME, else `service`. Fields pass through `redactText`, as
 * with our own logger, so an AMQP password never reaches a line.
 * @example
 * const log = createLambdaLogger({ service: 'orders-retry' });
 * log.addContext(context);
 * log.info('invocation summary', { summary });
 */
function createLambdaLogger(options: { readonly service: string }): LambdaLogger {
  const env = process.env;
  // Powertools reads LOG_LEVEL in capitals only; ours is documented in lower case. Its own order
  // stays: AWS_LAMBDA_LOG_LEVEL, then POWERTOOLS_LOG_LEVEL, then LOG_LEVEL.
  const logLevel = env.POWERTOOLS_LOG_LEVEL ? undefined : (env.LOG_LEVEL?.toUpperCase() as ConstructorOptions['logLevel']);
  const powertools = new PowertoolsLogger({ serviceName: env.POWERTOOLS_SERVICE_NAME || options.service, logLevel });
  return Object.assign(withFields(powertools, {}), {
    addContext: (context: LambdaContextLike) => powertools.addContext(context as Parameters<PowertoolsLogger['addContext']>[0]),
  });
}

function withFields(powertools: PowertoolsLogger, base: LogFields): Logger {
  const emit = (write: (message: string, fields: Record<string, unknown>) => void, message: string, fields?: LogFields): void => {
    write(redactText(message), redacted({ ...base, ...fields }));
  };
  return {
    get debugEnabled() {
      return powertools.level <= POWERTOOLS_DEBUG;
    },
    debug: (m, f) => {
      if (powertools.level <= POWERTOOLS_DEBUG) emit((message, fields) => powertools.debug(message, fields), m, f);
    },
    info: (m, f) => emit((message, fields) => powertools.info(message, fields), m, f),
    warn: (m, f) => emit((message, fields) => powertools.warn(message, fields), m, f),
    error: (m, f) => emit((message, fields) => powertools.error(message, fields), m, f),
    child: (fields) => withFields(powertools, { ...base, ...fields }),
  };
}

/** The fields with every text redacted (via one JSON round trip: errors become `{ name, message }`). */
function redacted(fields: LogFields): Record<string, unknown> {
  return JSON.parse(redactText(JSON.stringify(fields, jsonSafe))) as Record<string, unknown>;
}

export { createLambdaLogger };
export type { LambdaLogger };
