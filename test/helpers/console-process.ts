import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { AMQP_URL } from './broker.js';
import { boomerangArgs } from './boomerang-cli.js';

type ConsoleRun = { readonly child: ChildProcess; stdout: () => string; stderr: () => string };

/** `boomerang console <args>` with AMQP_URL and `env`, its stdout and stderr as they come. */
function startConsole(args: string[], env: Record<string, string> = {}): ConsoleRun {
  const child = spawn(process.execPath, boomerangArgs(['console', ...args]), { env: { ...process.env, AMQP_URL, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return { child, stdout: () => stdout, stderr: () => stderr };
}

/** Waits for the URL the console prints last; undefined when it exited first. */
async function consoleUrl(run: ConsoleRun): Promise<string | undefined> {
  while (!/\?token=\S+\n$/.test(run.stdout()) && run.child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 100));
  return run.child.exitCode === null ? run.stdout().trim().split('\n').at(-1) : undefined;
}

/** Ctrl-C, and the exit code. */
async function stopConsole(run: ConsoleRun): Promise<number> {
  if (run.child.exitCode !== null) return run.child.exitCode;
  run.child.kill('SIGINT');
  const [code] = await once(run.child, 'exit');
  return code as number;
}

export { consoleUrl, startConsole, stopConsole };
export type { ConsoleRun };
