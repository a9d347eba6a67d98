import { AMQP_URL } from './broker.js';
import { type CliRun, callBoomerang } from './boomerang-cli.js';

/** Runs `boomerang parked <args>` in this process for one work queue (WORK_QUEUE), plus `env`, stdin not a terminal, as a script would. */
function runParkedCli(args: string[], work: string, env: Record<string, string> = {}): Promise<CliRun> {
  return callBoomerang(['parked', ...args], { env: { ...process.env, AMQP_URL, WORK_QUEUE: work, ...env } });
}

export { runParkedCli };
