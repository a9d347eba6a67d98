/**
 * A `PolicyReader` that asks `rabbitmqctl`, for `topology verify --rabbitmqctl <command>` and `apply`:
 * AMQP cannot read policies, and a native work queue may get what the mode needs from one.
 * `list_queues ... effective_policy_definition` is RabbitMQ 3.12+ (3.10.8 refuses the key), which
 * is no loss: native mode needs 4.3.
 */
import { execFile } from 'node:child_process';
import type { PolicyReader, QueuePolicy } from './types.js';

/**
 * The effective policy of `queue` in `list_queues --formatter json name policy effective_policy_definition`
 * output, or `undefined` when the queue is not listed. Text around the JSON array (a wrapper's own
 * lines) is ignored; output that holds no such array throws.
 * @example policyFromListing('[{"name":"orders","policy":"p","effective_policy_definition":{"delivery-limit":5}}]', 'orders')
 * // { name: 'p', definition: { 'delivery-limit': 5 } }
 */
function policyFromListing(output: string, queue: string): QueuePolicy | undefined {
  const start = output.indexOf('[');
  const end = output.lastIndexOf(']');
  if (start < 0 || end < start) throw new Error(`rabbitmqctl list_queues gave no JSON list: ${output.slice(0, 200)}`);
  const rows = JSON.parse(output.slice(start, end + 1)) as unknown[];
  const row = rows.find((r): r is Record<string, unknown> => typeof r === 'object' && r !== null && (r as { name?: unknown }).name === queue);
  if (row === undefined) return undefined;
  const definition = row.effective_policy_definition;
  return {
    name: typeof row.policy === 'string' ? row.policy : '',
    // An empty definition comes as [] from some versions' JSON formatter.
    definition: typeof definition === 'object' && definition !== null && !Array.isArray(definition) ? (definition as Record<string, unknown>) : {},
  };
}

/** The `rabbitmqctl` arguments that list every queue of `vhost` with its effective policy, as JSON. */
function listArgs(vhost: string): string[] {
  return ['list_queues', '--quiet', '--vhost', vhost, '--formatter', 'json', 'name', 'policy', 'effective_policy_definition'];
}

/**
 * Reads policies by running `command` (`['rabbitmqctl']`, or `['rabbitmqctl', '-n', 'rabbit@host']`)
 * with `list_queues` for `vhost`.
 * @example const readPolicy = rabbitmqctlPolicyReader(['rabbitmqctl'], '/'); await readPolicy('orders');
 */
function rabbitmqctlPolicyReader(command: readonly string[], vhost: string): PolicyReader {
  const [file, ...prefix] = command;
  if (file === undefined) throw new Error('rabbitmqctlPolicyReader needs a command');
  return (queue) =>
    new Promise((resolve, reject) => {
      execFile(file, [...prefix, ...listArgs(vhost)], { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`${command.join(' ')} list_queues failed: ${stderr.trim() || error.message}`, { cause: error }));
        else {
          try {
            resolve(policyFromListing(stdout, queue));
          } catch (parseError) {
            reject(parseError as Error);
          }
        }
      });
    });
}

export { listArgs, policyFromListing, rabbitmqctlPolicyReader };
