import { writeFile } from 'node:fs/promises';
import type { ChannelModel } from 'amqplib';
import { vhostOfUrl } from '../amqp/broker-endpoints.js';
import { connectFromConfig } from '../amqp/connect-from-config.js';
import { type Config, DEFAULTS, loadConfig, topologyOptionsFromConfig } from '../config/config.js';
import { createLogger, logLevelFrom } from '../observability/logger.js';
import { TopologyMismatchError } from '../errors.js';
import { formatVerifyAdvice, formatWarnings } from '../topology/advice.js';
import { applyTopology } from '../topology/apply.js';
import { brokerVersionOf } from '../topology/broker-ops.js';
import { topologyDefinitions } from '../topology/definitions.js';
import { buildTopologyPlan } from '../topology/plan.js';
import { formatReport } from '../topology/report.js';
import type { TopologyPlan } from '../topology/types.js';
import { verifyTopology } from '../topology/verify.js';
import { asUsage, parseCli, runCli, UsageError } from './args.js';

const USAGE = `Usage: npm run topology -- <apply|verify|export> [--queue <name>] [--out <file>] [--vhost <name>] [--broker-version <x.y.z>]

  apply    declares the parking lot, the delay path and (if missing) the work queue; idempotent.
           An existing queue whose arguments differ is reported with every differing argument,
           not changed. Warns (and shows the rabbitmqctl policy that fixes it) when the work queue
           or the parking lot can drop messages past a delivery limit.
  verify   checks passively and changes nothing: reports what is missing or different, the same
           warnings, and what to do about each.
  export   writes the same topology as RabbitMQ definitions (JSON: exchanges, queues with their
           arguments, bindings) without connecting, for rabbitmqctl import_definitions <file>, the
           management API (POST /api/definitions) or the management UI (Amazon MQ too). An import
           leaves an existing queue alone even when its arguments differ: run verify afterwards.

  --queue <name>   the work queue (default: WORK_QUEUE, else ${DEFAULTS.workQueue})
  --out <file>     export: write here instead of stdout
  --vhost <name>   export: the vhost of every entity (default: AMQP_VHOST with AMQP_SECRET_ID, else
                   the vhost of the first AMQP_URL, else /)
  --broker-version <x.y.z>  export: the RabbitMQ version the definitions are for; 4.x gives a quorum
                   parking lot x-delivery-limit -1 (no limit). Without it: none, right for 3.x only
  -h, --help       this text

Reads the same environment as the function (AMQP_URL or AMQP_SECRET_ID, DELAY_MODE, QUEUE_TYPE,
MAX_RETRIES, BACKOFF_*, RETRY_RULES...): the delay queues follow the retry policy.
Exit codes: 0 in order, 1 missing or different (or the broker failed), 2 bad usage.`;

async function main(): Promise<number> {
  const { values, positionals } = parseCli(process.argv.slice(2), { queue: { type: 'string' }, out: { type: 'string' }, vhost: { type: 'string' }, 'broker-version': { type: 'string' } });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [command, ...extra] = positionals;
  if (command !== 'apply' && command !== 'verify' && command !== 'export') {
    throw new UsageError(command === undefined ? 'say apply, verify or export' : `unknown command ${JSON.stringify(command)}; expected apply, verify or export`);
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  if (command !== 'export' && (values.out !== undefined || values.vhost !== undefined || values['broker-version'] !== undefined)) {
    throw new UsageError('--out, --vhost and --broker-version are for export only');
  }
  const config = await asUsage(() => loadConfig(values.queue === undefined ? process.env : { ...process.env, WORK_QUEUE: values.queue }));
  if (command === 'export') {
    const plan = buildTopologyPlan({ ...topologyOptionsFromConfig(config), brokerVersion: values['broker-version'] });
    return exportDefinitions(config, plan, values.out, values.vhost);
  }
  const log = createLogger({ level: logLevelFrom(process.env.LOG_LEVEL) });
  const broker = await connectFromConfig(config, { connectionName: 'boomerang-topology', log });
  const brokerVersion = brokerVersionOf(broker.connection);
  const plan = buildTopologyPlan({ ...topologyOptionsFromConfig(config), brokerVersion });
  const vhost = config.amqpSecret?.vhost ?? vhostOfUrl(config.amqpUrls[0] ?? '');
  try {
    if (command === 'apply') return await apply(broker.connection, plan, config, vhost, brokerVersion);
    const report = await verifyTopology(broker.connection, plan);
    const verdict = report.ok ? 'topology is in order' : 'topology is NOT in order: see above';
    process.stdout.write(`${formatReport(report)}\n${said(formatVerifyAdvice(report, vhost))}${verdict}${report.warnings.length > 0 ? `, with ${report.warnings.length} warning(s)` : ''}\n`);
    return report.ok ? 0 : 1;
  } finally {
    await broker.close();
  }
}

/** Lines, each ending in a newline (nothing for none). */
function said(lines: readonly string[]): string {
  return lines.map((line) => `${line}\n`).join('');
}

async function apply(connection: ChannelModel, plan: TopologyPlan, config: Config, vhost: string, brokerVersion: string | undefined): Promise<number> {
  try {
    const report = await applyTopology(connection, plan);
    const summary = `topology applied for ${config.workQueue} (${config.delayMode} mode, ${config.queueType} queues, RabbitMQ ${brokerVersion ?? 'of unknown version'})`;
    process.stdout.write(`${formatReport(report)}\n${said(formatWarnings(report.warnings, vhost))}${summary}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof TopologyMismatchError)) throw error;
    process.stderr.write(`${error.name}: ${error.message}\n${said(formatWarnings(error.warnings, vhost))}`);
    return 1;
  }
}

async function exportDefinitions(config: Config, plan: TopologyPlan, out: string | undefined, vhost: string | undefined): Promise<number> {
  const json = `${JSON.stringify(topologyDefinitions(plan, vhost ?? config.amqpSecret?.vhost ?? vhostOfUrl(config.amqpUrls[0] ?? '')), null, 2)}\n`;
  if (out === undefined) {
    process.stdout.write(json);
    return 0;
  }
  await writeFile(out, json);
  process.stderr.write(`wrote ${plan.exchanges.length} exchanges, ${plan.queues.length} queues and ${plan.bindings.length} bindings for ${config.workQueue} to ${out}\n`);
  return 0;
}

await runCli(USAGE, main);
