import { AMQP_URL } from './broker.js';
import { type CliRun, runBoomerang } from './boomerang-cli.js';

/** Runs `boomerang parked <args>` for one work queue (WORK_QUEUE), plus `env`, with stdin closed (not a terminal), as a script would. */
function runParkedCli(args: string[], work: string, env: Record<string, string> = {}): Promise<CliRun> {
  return runBoomerang(['parked', ...args], { env: { ...process.env, AMQP_URL, WORK_QUEUE: work, ...env }, timeoutMs: 20_000 });
}

export { runParkedCli };
