/**
 * The names of every queue and exchange of a vhost, from `rabbitmqctl` (AMQP cannot list them): where
 * `topology prune --rabbitmqctl <command>` finds candidates.
 */
import { execFile } from 'node:child_process';

/**
 * The `name` of each row of `rabbitmqctl ... --formatter json name` output; text around the JSON array
 * (a wrapper's own lines) is ignored; output without one throws.
 * @example namesFromListing('[{"name":"orders"},{"name":"orders.parked"}]') // ['orders', 'orders.parked']
 */
function namesFromListing(output: string): string[] {
  const start = output.indexOf('[');
  const end = output.lastIndexOf(']');
  if (start < 0 || end < start) throw new Error(`rabbitmqctl gave no JSON list: ${output.slice(0, 200)}`);
  const rows = JSON.parse(output.slice(start, end + 1)) as unknown[];
  return rows.flatMap((row) =>
    typeof row === 'object' && row !== null && typeof (row as { name?: unknown }).name === 'string' ? [(row as { name: string }).name] : [],
  );
}

function run(command: readonly string[], args: readonly string[]): Promise<string> {
  const [file, ...prefix] = command;
  if (file === undefined) return Promise.reject(new Error('rabbitmqctlNames needs a command'));
  return new Promise((resolve, reject) => {
    execFile(file, [...prefix, ...args], { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${[...command, args[0]].join(' ')} failed: ${stderr.trim() || error.message}`, { cause: error }));
      else resolve(stdout);
    });
  });
}

/**
 * Every queue and exchange name of `vhost`, by running `command` (`['rabbitmqctl']`, or
 * `['rabbitmqctl', '-n', 'rabbit@host']`) with `list_queues` and `list_exchanges`.
 * @example const names = await rabbitmqctlNames(['rabbitmqctl'], '/');
 */
async function rabbitmqctlNames(command: readonly string[], vhost: string): Promise<string[]> {
  const listed = await Promise.all(
    ['list_queues', 'list_exchanges'].map((list) => run(command, [list, '--quiet', '--vhost', vhost, '--formatter', 'json', 'name'])),
  );
  return listed.flatMap(namesFromListing);
}

export { namesFromListing, rabbitmqctlNames };
