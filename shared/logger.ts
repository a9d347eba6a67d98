import { redactText } from './redact.js';

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
type LogLevel = keyof typeof LEVELS;
type LogFields = Readonly<Record<string, unknown>>;

/** The logging port; every log line is one JSON object on stderr (stdout is kept for results). */
interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

type LoggerOptions = {
  /** @default 'info' */
  readonly level?: LogLevel;
  readonly fields?: LogFields;
  /** Where lines go. @default process.stderr */
  readonly write?: (line: string) => void;
};

/** A structured JSON logger. Text passes through `redactText`, so an AMQP password never reaches a line. */
function createLogger(options: LoggerOptions = {}): Logger {
  const threshold = LEVELS[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const base = options.fields ?? {};
  const emit = (level: Exclude<LogLevel, 'silent'>, message: string, fields?: LogFields): void => {
    if (LEVELS[level] < threshold) return;
    // Fields first: a field named `level`, `time` or `message` must not overwrite the line's own.
    const line = JSON.stringify({ ...base, ...fields, level, time: new Date().toISOString(), message }, jsonSafe);
    write(redactText(line));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger({ ...options, fields: { ...base, ...fields } }),
  };
}

function jsonSafe(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}

/** Parses `LOG_LEVEL`; unknown values fall back to info rather than silencing the logs. */
function logLevelFrom(value: string | undefined): LogLevel {
  return value !== undefined && Object.hasOwn(LEVELS, value) ? (value as LogLevel) : 'info';
}

/** A logger that drops everything (tests, benchmarks). */
const silentLogger: Logger = createLogger({ level: 'silent' });

export { createLogger, logLevelFrom, silentLogger };
export type { LogFields, Logger, LogLevel };
