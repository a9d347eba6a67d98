import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { boomerangArgs } from './boomerang-cli.js';

/** The repository root: handler paths are relative to it. */
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

type InvokeOptions = {
  /** Path of the handler module, relative to the repository root or absolute. */
  readonly handler: string;
  readonly queue: string;
  readonly budgetMs: number;
  /** Added to the parent's environment. */
  readonly env: Readonly<Record<string, string>>;
  /** The `aws:rmq` event file: runs the event function (`invoke event`) instead of the pull function. @default none */
  readonly eventFile?: string;
};

type InvokeResult = {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The last stdout line parsed as JSON (the summary), when there is one. */
  readonly summary: Record<string, unknown> | undefined;
};

type ChildInvocation = {
  readonly child: ChildProcess;
  readonly exited: Promise<InvokeResult>;
  /** Resolves at the first byte the child writes to stderr (its logs), or when it exits. */
  readonly firstLog: Promise<void>;
};

/**
 * Runs one invocation as its own process, exactly as `boomerang invoke pull` (or `invoke event` with
 * `eventFile`) does but without npm in between (`node --import tsx shared/cli/boomerang.ts invoke`),
 * so a signal reaches the invocation itself.
 */
function spawnInvoke(options: InvokeOptions): ChildInvocation {
  const mode = options.eventFile === undefined ? ['pull'] : ['event', '--event', options.eventFile];
  const args = boomerangArgs(['invoke', ...mode, '--handler', options.handler, '--work-queue', options.queue, '--budget-ms', String(options.budgetMs)]);
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let logged: () => void = () => undefined;
  const firstLog = new Promise<void>((resolve) => {
    logged = resolve;
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    logged();
  });
  const exited = new Promise<InvokeResult>((resolve) => {
    child.on('close', (code, signal) => {
      logged();
      resolve({ code, signal, stdout, stderr, summary: lastJsonLine(stdout) });
    });
  });
  return { child, exited, firstLog };
}

/** The last line of `text` as a JSON object (a CLI's summary line), or undefined when it is none. */
function lastJsonLine(text: string): Record<string, unknown> | undefined {
  const line = text.trim().split('\n').pop();
  if (!line) return undefined;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

export { lastJsonLine, REPO_ROOT, spawnInvoke };
export type { InvokeResult };
