import { ConfigError } from '../errors.js';

/** Environment variables as read; a plain record so tests pass their own. */
type Env = Readonly<Record<string, string | undefined>>;

/** The value of `name`, or undefined when unset or blank (a blank variable means "use the default"). */
function envString(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/**
 * An integer variable within [min, max]; the error names the variable, the value and the range, then
 * `why` when given (the reason for a bound that is not obvious).
 */
function envInt(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER, why?: string): number {
  const raw = envString(env, name);
  if (raw === undefined) return fallback;
  const value = /^-?\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}; got ${JSON.stringify(raw)}${why === undefined ? '' : ` (${why})`}`);
  }
  return value;
}

/** A decimal variable within [min, max]. */
function envNumber(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = envString(env, name);
  if (raw === undefined) return fallback;
  const value = /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a number from ${min} to ${max}; got ${JSON.stringify(raw)}`);
  }
  return value;
}

/** One of a fixed set of words. */
function envChoice<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T): T {
  const raw = envString(env, name);
  if (raw === undefined) return fallback;
  if (!(choices as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${choices.join(', ')}; got ${JSON.stringify(raw)}`);
  }
  return raw as T;
}

/** A JSON variable, parsed; the error says where the JSON is broken. */
function envJson(env: Env, name: string): unknown {
  const raw = envString(env, name);
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch (error) {
    throw new ConfigError(`${name} is not valid JSON (${(error as Error).message})`, { cause: error });
  }
}

/** AMQP queue names are short strings: at most 255 bytes. */
const MAX_NAME_BYTES = 255;

/** An AMQP queue or exchange name: at most 255 bytes, and not in the broker's reserved `amq.` space. */
function envQueueName(env: Env, name: string, fallback: string): string {
  const value = envString(env, name) ?? fallback;
  if (Buffer.byteLength(value) > MAX_NAME_BYTES) throw new ConfigError(`${name} must be at most ${MAX_NAME_BYTES} bytes; got ${Buffer.byteLength(value)} bytes`);
  if (value.startsWith('amq.')) throw new ConfigError(`${name} must not start with "amq." (reserved by the broker); got ${JSON.stringify(value)}`);
  return value;
}

export { envChoice, envInt, envJson, envNumber, envQueueName, envString };
export type { Env };
