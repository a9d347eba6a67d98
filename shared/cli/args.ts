import { parseArgs, type ParseArgsConfig } from 'node:util';
import { isNamedError, UsageError } from '../errors.js';
import { GuardedOutput } from '../observability/guarded-output.js';
import { didYouMean } from '../config/did-you-mean.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** What `parseCli` hands `parseArgs`: the CLI's options plus `--help`, positionals allowed, unknown flags refused. */
type CliConfig<T extends Options> = { args: string[]; options: T & { help: { type: 'boolean'; short: 'h' } }; allowPositionals: true; strict: true };

/**
 * `parseArgs` with strict checking; its errors become `UsageError`s that name the bad flag.
 * `renamed` maps an old flag to its new name: the old spelling is read as the new one, with a note
 * on stderr (`--queue` named the parking queue for `parked` but the work queue elsewhere).
 */
function parseCli<T extends Options>(argv: string[], options: T, renamed: Readonly<Record<string, string>> = {}): ReturnType<typeof parseArgs<CliConfig<T>>> {
  try {
    const config: CliConfig<T> = {
      args: renameFlags(argv, renamed),
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    };
    return parseArgs(config);
  } catch (error) {
    throw new UsageError(usageMessage(error as Error & { code?: string }, Object.keys(options)));
  }
}

/**
 * Node's parser's error in the CLI's words: an unknown option is named, with the closest known one
 * (`unknown option --functon; did you mean --function?`), else the list; other errors as Node says them.
 */
function usageMessage(error: Error & { code?: string }, known: readonly string[]): string {
  if (error.code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return error.message;
  const typed = /'(-[^']*)'/.exec(error.message)?.[1];
  if (typed === undefined) return error.message;
  const name = typed.replace(/^-+/, '');
  const flags = [...known, 'help'];
  const hint = didYouMean(name, flags, (flag) => `--${flag}`);
  return `unknown option ${typed}${hint || `; the options are ${flags.map((flag) => `--${flag}`).join(', ')}`}`;
}

/** `argv` with each old flag of `renamed` spelled by its new name (`--old v`, `--old=v`), saying so once on stderr. */
function renameFlags(argv: readonly string[], renamed: Readonly<Record<string, string>>): string[] {
  const said = new Set<string>();
  return argv.map((arg) => {
    const [flag, ...value] = arg.split('=');
    const now = flag?.startsWith('--') ? renamed[flag.slice(2)] : undefined;
    if (now === undefined || flag === undefined) return arg;
    if (!said.has(flag)) GuardedOutput.of(process.stderr).write(`${flag} is now --${now} (the old name still works)\n`);
    said.add(flag);
    return [`--${now}`, ...value].join('=');
  });
}

/** A whole number flag within [min, max]. */
function intFlag(name: string, value: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max)
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}; got ${JSON.stringify(value)}`);
  return parsed;
}

/**
 * Runs a CLI's start-up step (reading the environment, loading the files its flags name): a
 * `ConfigError` there is bad input like a bad flag, so it becomes a `UsageError` (exit 2 with the usage).
 * @example const config = await asUsage(() => loadConfig());
 */
async function asUsage<T>(step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if ((error as Error | undefined)?.name === 'ConfigError') throw new UsageError((error as Error).message, { cause: error });
    throw error;
  }
}

/**
 * The usage's synopsis: its first paragraph (the `Usage:` lines), and where the rest is.
 * @example synopsis('Usage: boomerang invoke pull\n\nRuns one invocation…') // 'Usage: boomerang invoke pull\n(--help shows every option)'
 */
function synopsis(usage: string): string {
  const [first = usage] = usage.split(/\n\s*\n/);
  return first === usage ? usage : `${first}\n(--help shows every option)`;
}

/**
 * Runs a CLI's main function: usage errors exit 2 with the error and the usage's synopsis (the full
 * text is `--help`'s), other errors exit 1 with their name and message (never a stack trace for an
 * expected failure).
 */
async function runCli(usage: string, main: () => Promise<number>): Promise<void> {
  try {
    process.exitCode = await main();
  } catch (error) {
    const e = error as Error;
    if (isNamedError(error, 'UsageError')) {
      GuardedOutput.of(process.stderr).write(`error: ${e.message}\n\n${synopsis(usage)}\n`);
      process.exitCode = 2;
      return;
    }
    GuardedOutput.of(process.stderr).write(`${e.name}: ${e.message}\n`);
    process.exitCode = 1;
  }
}

/** A positive whole number from the environment, or undefined; a bad one is bad usage naming the variable. */
function asEnvInt(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`${name} must be a whole number of at least 1; got ${JSON.stringify(value)}`);
  return Number(value);
}

export { asEnvInt, asUsage, intFlag, parseCli, runCli, synopsis };
