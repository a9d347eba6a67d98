import { redactText } from './redact.js';

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
type LogLevel = keyof typeof LEVELS;
type LogFields = Readonly<Record<string, unknown>>;

/**
 * The logging port; every log line goes to stderr (stdout is kept for results): one JSON object
 * (CloudWatch Logs Insights reads its fields), or one readable line on a terminal.
 */
interface Logger {
  /** Whether `debug` writes anything: hot paths skip building debug fields when it does not. */
  readonly debugEnabled: boolean;
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
  /**
   * `json`: one JSON object per line. `pretty`: time, level, message and `key=value` fields on one
   * line, coloured unless `NO_COLOR` is set.
   * @default 'pretty' when writing to stderr and stderr is a terminal, else 'json'
   */
  readonly format?: LogFormat;
};

/** `json`: one JSON object per line; `pretty`: a readable line for a terminal. */
type LogFormat = 'json' | 'pretty';

const COLOURS: Readonly<Record<Exclude<LogLevel, 'silent'>, string>> = { debug: '\x1b[90m', info: '\x1b[36m', warn: '\x1b[33m', error: '\x1b[31m' };

/** A structured JSON logger. Text passes through `redactText`, so an AMQP password never reaches a line. */
function createLogger(options: LoggerOptions = {}): Logger {
  const threshold = LEVELS[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const format = options.format ?? (options.write === undefined && process.stderr.isTTY ? 'pretty' : 'json');
  const base = options.fields ?? {};
  const emit = (level: Exclude<LogLevel, 'silent'>, message: string, fields?: LogFields): void => {
    if (LEVELS[level] < threshold) return;
    const time = new Date().toISOString();
    // Fields first: a field named `level`, `time` or `message` must not overwrite the line's own.
    const line =
      format === 'pretty'
        ? prettyLine(level, time, message, { ...base, ...fields }, process.env.NO_COLOR === undefined)
        : JSON.stringify({ ...base, ...fields, level, time, message }, jsonSafe);
    write(redactText(line));
  };
  return {
    debugEnabled: LEVELS.debug >= threshold,
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger({ ...options, fields: { ...base, ...fields } }),
  };
}

/** `12:00:01.250 WARN  message parked messageId=m-1 reason="retries exhausted"`, on one line. */
function prettyLine(level: Exclude<LogLevel, 'silent'>, time: string, message: string, fields: LogFields, colour: boolean): string {
  const label = level.toUpperCase().padEnd(5);
  const pairs = Object.entries(fields).map(([key, value]) => `${key}=${prettyValue(value)}`);
  return [time.slice(11, 23), colour ? `${COLOURS[level]}${label}\x1b[0m` : label, message.replace(/\s*\n\s*/g, ' '), ...pairs].join(' ');
}

function prettyValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value, jsonSafe) ?? String(value);
}

/** JSON.stringify's replacer for log fields: bigints as text, errors as `{ name, message }`. */
function jsonSafe(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}

/** Parses `LOG_LEVEL`; unknown values fall back to info rather than silencing the logs. */
function logLevelFrom(value: string | undefined): LogLevel {
  return value !== undefined && Object.hasOwn(LEVELS, value) ? (value as LogLevel) : 'info';
}

export { createLogger, jsonSafe, logLevelFrom };
export type { LogFields, Logger, LogLevel };
