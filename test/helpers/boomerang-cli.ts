import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

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

export { answerOnTerminal, boomerangArgs, runBoomerang };
export type { CliRun };
