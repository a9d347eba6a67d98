import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { AMQP_URL } from './broker.js';

const BIN = fileURLToPath(new URL('../../shared/cli/parked-bin.mjs', import.meta.url));

/** Runs the installed bin (`boomerang-parked`) for one work queue (WORK_QUEUE), plus `env`, with stdin closed (not a terminal), as a script would. */
function runParkedCli(args: string[], work: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [BIN, ...args], { env: { ...process.env, AMQP_URL, WORK_QUEUE: work, ...env }, timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
    });
    child.stdin?.end();
  });
}

export { runParkedCli };
