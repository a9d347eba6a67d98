import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { boomerang } from '../../shared/cli/main.js';

/** The CLI's entry point, run from the source as this repository's npm scripts run it. */
const BOOMERANG = fileURLToPath(new URL('../../shared/cli/boomerang.ts', import.meta.url));

/** Node's arguments for `boomerang <args>` from the source, without npm in between (a signal reaches the CLI itself). */
function boomerangArgs(args: readonly string[]): string[] {
  return ['--import', 'tsx', BOOMERANG, ...args];
}

type CliRun = {
  /** The exit code; null when the process was killed (a timeout: a hang fails the test). */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
};

type CliRunOptions = {
  /** The child's whole environment (nothing is inherited unless given). */
  readonly env: NodeJS.ProcessEnv;
  /** @default 25 000 */
  readonly timeoutMs?: number;
  /** @default the test process's working directory */
  readonly cwd?: string;
};

/**
 * Runs `boomerang <args>` (`npm run <command> -- ...` does the same) with stdin closed (not a
 * terminal), as a script would; resolves when it exits.
 * @example const run = await runBoomerang(['topology', 'export'], { env: { PATH: process.env.PATH } });
 */
function runBoomerang(args: readonly string[], { env, timeoutMs = 25_000, cwd }: CliRunOptions): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, boomerangArgs(args), { env, cwd, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
    child.stdin?.end();
  });
}

/** The last in-process call: each takes over this process's environment and output, so calls run one after another. */
let lastCall: Promise<unknown> = Promise.resolve();

/**
 * Runs `boomerang <args>` in this process, as `runBoomerang` runs it in a child: `env` is the whole
 * environment and `cwd` the working directory for the call, stdin is not a terminal, and what the
 * command writes to stdout and stderr is captured; all restored afterwards. No process start, no tsx:
 * a call costs what the command does. Calls made together run one after another.
 * @example const run = await callBoomerang(['topology', 'export'], { env: { PATH: process.env.PATH } });
 */
function callBoomerang(args: readonly string[], options: CliRunOptions): Promise<CliRun> {
  return callInProcess(() => boomerang(args), options);
}

/**
 * Runs a command's entry (`run`, which writes to process.stdout and process.stderr and leaves its exit
 * code in process.exitCode, as `runCli` does) in this process, with `options` as callBoomerang has them.
 */
function callInProcess(run: () => Promise<unknown>, options: CliRunOptions): Promise<CliRun> {
  const call = lastCall.then(() => callAlone(run, options));
  lastCall = call.catch(() => undefined);
  return call;
}

/** callInProcess's one call, with nothing else calling. */
async function callAlone(run: () => Promise<unknown>, { env, cwd }: CliRunOptions): Promise<CliRun> {
  const saved = { env: { ...process.env }, cwd: process.cwd(), exitCode: process.exitCode, stdout: process.stdout.write, stderr: process.stderr.write };
  const tty = Object.getOwnPropertyDescriptor(process.stdin, 'isTTY');
  const output = { stdout: '', stderr: '' };
  const capture =
    (into: 'stdout' | 'stderr') =>
    (chunk: string | Uint8Array, encoding?: BufferEncoding | ((error?: Error | null) => void), callback?: (error?: Error | null) => void): boolean => {
      output[into] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
      const done = typeof encoding === 'function' ? encoding : callback;
      if (done !== undefined) queueMicrotask(() => done(null));
      return true;
    };
  replaceEnv(env);
  try {
    if (cwd !== undefined) process.chdir(cwd);
    process.exitCode = undefined;
    Object.defineProperty(process.stdin, 'isTTY', { value: false, configurable: true, writable: true });
    process.stdout.write = capture('stdout') as typeof process.stdout.write;
    process.stderr.write = capture('stderr') as typeof process.stderr.write;
    await run();
    return { code: Number(process.exitCode ?? 0), ...output };
  } finally {
    process.stdout.write = saved.stdout;
    process.stderr.write = saved.stderr;
    if (tty === undefined) delete (process.stdin as { isTTY?: boolean }).isTTY;
    else Object.defineProperty(process.stdin, 'isTTY', tty);
    process.exitCode = saved.exitCode;
    process.chdir(saved.cwd);
    replaceEnv(saved.env);
  }
}

/** Makes process.env exactly `env` (the same object: modules that kept a reference see the change). */
function replaceEnv(env: NodeJS.ProcessEnv): void {
  for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
  for (const [key, value] of Object.entries(env)) if (value !== undefined) process.env[key] = value;
}

/**
 * Runs `boomerang <args>` on a terminal (script(1) gives it one) and types `answer` once the screen
 * shows `[y/N]`; resolves with the exit code and everything the terminal showed.
 * @example const { code, screen } = await answerOnTerminal(['parked', 'purge'], env, 'y');
 */
function answerOnTerminal(args: readonly string[], env: NodeJS.ProcessEnv, answer: string): Promise<{ code: number | null; screen: string }> {
  const child = spawn('script', ['-qec', [process.execPath, ...boomerangArgs(args)].join(' '), '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let screen = '';
  child.stdout.on('data', (chunk: Buffer) => {
    screen += chunk.toString();
    if (screen.includes('[y/N]') && child.stdin.writable) child.stdin.end(`${answer}\n`);
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, screen })));
}

export { answerOnTerminal, boomerangArgs, callBoomerang, callInProcess, runBoomerang };
export type { CliRun };
