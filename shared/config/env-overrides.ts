import { type ConfigInCode, pathInCode } from './config-in-code.js';
import { type Env, envString, envValue } from './env.js';
import { OPTIONS, type OptionSpec } from './option-table.js';
import { STRUCTURED_OPTIONS } from './structured-options.js';

/**
 * An environment variable that is set but not read, because the queue's file gives its option: the
 * file wins (see `ConfigInCode`), so without a word the variable would be ignored in silence.
 */
type EnvOverride = {
  readonly variable: string;
  /** The variable's value, as set. */
  readonly envValue: string;
  /** The option's value in the file, as JSON. */
  readonly fileValue: string;
  /** Where the file gives it: `retry.maxRetries in defineQueue("webhooks")`. */
  readonly option: string;
  /** Why the variable's value would be refused, had the file not replaced it; absent when it is valid. */
  readonly envValueInvalid?: string;
};

/** One variable a file can replace: where the option sits in `ConfigInCode`, and how the variable alone is checked. */
type Replaceable = {
  readonly variable: string;
  /** Where `defineQueue` takes it (`advanced.tracing`). */
  readonly option: string;
  /** Where it sits in `ConfigInCode` (`['tracing']`). */
  readonly path: readonly string[];
  readonly check: (env: Env) => unknown;
};

/** Every variable an option in code replaces: the schema's rows with both a place in code and a variable. */
const REPLACEABLE: readonly Replaceable[] = [
  ...STRUCTURED_OPTIONS.flatMap(({ code, variable, check }) =>
    code !== undefined && variable !== undefined && check !== undefined ? [{ variable, option: code, path: pathInCode(code), check }] : [],
  ),
  ...Object.values(OPTIONS as Record<string, OptionSpec>)
    .filter((option): option is OptionSpec & { readonly code: string } => option.code !== undefined)
    // An option without a default (a rate limit) is checked all the same: the fallback is never read for a set variable.
    .map((option) => ({
      variable: option.variable,
      option: option.code,
      path: pathInCode(option.code),
      check: (env: Env) => envValue(env, option.variable, option.range, option.default ?? 0, option.why),
    })),
];

/** The value at `path` in the options given in code; undefined when not given there. */
function inCode(code: ConfigInCode, path: readonly string[]): unknown {
  let value: unknown = code;
  for (const key of path) value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

/**
 * The variables set in `env` whose option the file gives in `code` (pure), each with both values and,
 * when the variable's value is one its own parser would refuse, why. A blank variable means "unset".
 * @example envOverrides({ MAX_RETRIES: '-1' }, { source: 'defineQueue("qa-invoices")', retry: { maxRetries: 5 } })
 * // [{ variable: 'MAX_RETRIES', envValue: '-1', fileValue: '5', option: 'retry.maxRetries in defineQueue("qa-invoices")', envValueInvalid: 'MAX_RETRIES must be an integer from 0 to 1000; got "-1"' }]
 */
function envOverrides(env: Env, code: ConfigInCode): EnvOverride[] {
  return REPLACEABLE.flatMap(({ variable, option, path, check }) => {
    const envValue = envString(env, variable);
    const fileValue = inCode(code, path);
    if (envValue === undefined || fileValue === undefined) return [];
    const invalid = whyRefused(() => check({ [variable]: envValue }));
    return [
      {
        variable,
        envValue,
        fileValue: JSON.stringify(fileValue),
        option: `${option} in ${code.source}`,
        ...(invalid === undefined ? {} : { envValueInvalid: invalid }),
      },
    ];
  });
}

function whyRefused(check: () => unknown): string | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * One line per override, as the CLIs print them and the functions log them (pure).
 * @example formatOverrides(overrides) // ['MAX_RETRIES=-1 is set but not used: retry.maxRetries in defineQueue("qa-invoices") is 5 (and -1 would be refused: ...)']
 */
function formatOverrides(overrides: readonly EnvOverride[]): string[] {
  return overrides.map(
    (o) =>
      `${o.variable}=${o.envValue} is set but not used: ${o.option} is ${o.fileValue}${o.envValueInvalid === undefined ? '' : ` (and ${o.envValue} would be refused: ${o.envValueInvalid})`}`,
  );
}

export { envOverrides, formatOverrides };
export type { EnvOverride };
