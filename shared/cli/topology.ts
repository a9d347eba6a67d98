import { connectBroker } from '../amqp/connection.js';
import { DEFAULTS, loadConfig, topologyOptionsFromConfig } from '../config.js';
import { applyTopology } from '../topology/apply.js';
import { buildTopologyPlan } from '../topology/plan.js';
import { formatReport } from '../topology/report.js';
import { verifyTopology } from '../topology/verify.js';
import { parseCli, runCli, UsageError } from './args.js';

const USAGE = `Usage: npm run topology -- <apply|verify> [--queue <name>]

  apply    declares the parking lot, the delay path and (if missing) the work queue; idempotent.
           An existing queue whose arguments differ is reported by name and argument, not changed.
  verify   checks passively and changes nothing: reports what is missing or different.

  --queue <name>   the work queue (default: WORK_QUEUE, else ${DEFAULTS.workQueue})
  -h, --help       this text

Reads the same environment as the function (AMQP_URL, DELAY_MODE, QUEUE_TYPE, MAX_RETRIES,
BACKOFF_*, RETRY_RULES...): the delay queues follow the retry policy.
Exit codes: 0 in order, 1 missing or different (or the broker failed), 2 bad usage.`;

async function main(): Promise<number> {
  const { values, positionals } = parseCli(process.argv.slice(2), { queue: { type: 'string' } });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [command, ...extra] = positionals;
  if (command !== 'apply' && command !== 'verify') throw new UsageError(command === undefined ? 'say apply or verify' : `unknown command ${JSON.stringify(command)}; expected apply or verify`);
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  const config = loadConfig(values.queue === undefined ? process.env : { ...process.env, WORK_QUEUE: values.queue });
  const plan = buildTopologyPlan(topologyOptionsFromConfig(config));
  const broker = await connectBroker({ urls: config.amqpUrls, connectTimeoutMs: config.connectTimeoutMs, connectionName: 'boomerang-topology' });
  try {
    if (command === 'apply') {
      const report = await applyTopology(broker.connection, plan);
      process.stdout.write(`${formatReport(report)}\ntopology applied for ${config.workQueue} (${config.delayMode} mode, ${config.queueType} queues)\n`);
      return 0;
    }
    const report = await verifyTopology(broker.connection, plan);
    process.stdout.write(`${formatReport(report)}\n${report.ok ? 'topology is in order' : 'topology is NOT in order: run npm run topology -- apply, or see the items above'}\n`);
    return report.ok ? 0 : 1;
  } finally {
    await broker.close();
  }
}

await runCli(USAGE, main);
