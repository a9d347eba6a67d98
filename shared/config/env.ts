import { ConfigError } from '../errors.js';
import { describeRange, inRange, type OptionRange, parseRaw, quoteValue } from './option-range.js';
import type { OptionSpec, OptionValue } from './option-table.js';

/** Environment variables as read; a plain record so tests pass their own. */
type Env = Readonly<Record<string, string | undefined>>;

/** The value of `name`, or undefined when unset or blank (a blank variable means "use the default"). */
function envString(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/**
 * A variable within `range`, or `fallback` when unset; the error names the variable, the range, the
 * value as written, then `why` when given (the reason for a bound that is not obvious).
 */
function envValue(env: Env, name: string, range: OptionRange, fallback: number | string, why?: string): number | string {
  const raw = envString(env, name);
  if (raw === undefined) return fallback;
  const value = parseRaw(range, raw);
  if (!inRange(range, value)) {
    throw new ConfigError(`${name} must be ${describeRange(range)}; got ${quoteValue(range, raw)}${why === undefined ? '' : ` (${why})`}`);
  }
  return value;
}

/**
 * An option of the table (`OPTIONS`) from its variable, else its default.
 * @example envOption({ BATCH_SIZE: '50' }, OPTIONS.batchSize) // 50
 */
function envOption<S extends OptionSpec & { readonly default: number | string }>(env: Env, option: S): OptionValue<S> {
  return envValue(env, option.variable, option.range, option.default, option.why) as OptionValue<S>;
}

/** An integer variable within [min, max], for settings outside the option table (CDK context, examples). */
function envInt(env: Env, name: string, fallback: number, min: number, max?: number, why?: string): number {
  return envValue(env, name, { type: 'integer', min, max }, fallback, why) as number;
}

/** One of a fixed set of words, for settings outside the option table. */
function envChoice<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T): T {
  return envValue(env, name, { type: 'choice', choices }, fallback) as T;
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
  if (Buffer.byteLength(value) > MAX_NAME_BYTES)
    throw new ConfigError(`${name} must be at most ${MAX_NAME_BYTES} bytes; got ${Buffer.byteLength(value)} bytes`);
  if (value.startsWith('amq.')) throw new ConfigError(`${name} must not start with "amq." (reserved by the broker); got ${JSON.stringify(value)}`);
  return value;
}

export { envChoice, envInt, envJson, envOption, envQueueName, envString, envValue };
export type { Env };
