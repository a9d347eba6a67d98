import { writeFile } from 'node:fs/promises';
import type { ChannelModel } from 'amqplib';
import { vhostOfConfig } from '../amqp/broker-endpoints.js';
import { connectFromConfig } from '../amqp/connect-from-config.js';
import { type Config, topologyOptionsFromConfig } from '../config/config.js';
import { createLogger, logLevelFrom } from '../observability/logger.js';
import { isNamedError, UsageError } from '../errors.js';
import { formatReport, formatVerifyAdvice, formatWarnings } from '../topology/report.js';
import { applyTopology } from '../topology/apply.js';
import { brokerVersionOf } from '../topology/broker-ops.js';
import { topologyDefinitions } from '../topology/definitions.js';
import { buildTopologyPlan } from '../topology/plan.js';
import type { TopologyMismatchError } from '../topology/mismatch.js';
import { nativeBrokerRefusal } from '../topology/native-broker.js';
import { rabbitmqctlPolicyReader } from '../topology/rabbitmqctl-policies.js';
import type { PolicyReader, TopologyPlan } from '../topology/types.js';
import { verifyTopology } from '../topology/verify.js';
import { parseCli } from './args.js';
import { type CliCommand, sameInThisRepository } from './command.js';
import { mergeDefinitions } from './merge-definitions.js';
import { assertPruneFlags, pruneTargets } from './topology-prune.js';
import { overrideNote, type QueueTarget, queueTargets } from './queue-flags.js';

const USAGE = `Usage: boomerang topology apply|verify|export [--function <name> | --work-queue <name>] [--out <file>] [--vhost <name>]
       [--broker-version <x.y.z>] [--rabbitmqctl <command>] [--functions-dir <dir>]
       boomerang topology prune [--function <name> | --work-queue <name>] (--name <entity>... | --rabbitmqctl <command>) [--yes]

Covers every queue declared in functions/ (each file exporting \`queue\` made by defineQueue; the folder
is --functions-dir, else BOOMERANG_FUNCTIONS_DIR when set), each with its own options, in one command.

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
  prune    removes the delay queues and delay-path markers of a work queue that its plan no longer
           needs (fewer tiers, a lower maxDelayMs), once they are empty; a dry run unless --yes.
           Never a queue that holds a message, never the work queue or the parking lot, never the
           shared levels of exact mode. The deploy's report names what an update left behind.

  --function <name>  only this declared queue
  --work-queue <name>  instead: one work queue configured by the environment alone (WORK_QUEUE,
                   MAX_RETRIES...; the old name --queue still works)
  --out <file>     export: write here instead of stdout
  --vhost <name>   export: the vhost of every entity (default: AMQP_VHOST with AMQP_SECRET_ID, else
                   the vhost of the first AMQP_URL, else /)
  --broker-version <x.y.z>  export: the RabbitMQ version the definitions are for; 4.x gives a quorum
                   parking lot x-delivery-limit -1 (no limit). Without it: none, right for 3.x only
                   (DELAY_MODE=native assumes 4.3 or later, and refuses an older version)
  --rabbitmqctl <command>  apply and verify: how to run rabbitmqctl against the broker (e.g.
                   'rabbitmqctl -n rabbit@host'), to read a DELAY_MODE=native work queue's policy,
                   which AMQP cannot; without it, that queue's arguments alone are judged.
                   prune: lists every queue and exchange of the vhost to find candidates
  --name <entity>  prune: a queue or exchange name to consider (repeatable)
  --yes            prune: delete (without it, a dry run that deletes nothing)
  -h, --help       this text

Reads the same environment as the functions (AMQP_URL or AMQP_SECRET_ID, and the variables a queue's
file leaves to the environment: DELAY_MODE, MAX_RETRIES, BACKOFF_*, RETRY_RULES...): the delay queues
follow each queue's retry policy and rules.
DELAY_MODE=native needs RabbitMQ 4.3 or later: apply and verify refuse an older broker, naming its
version and the modes that work there.
Exit codes: 0 in order, 1 missing or different (or the broker failed or was refused), 2 bad usage.
${sameInThisRepository('topology')}`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCli(
    argv,
    {
      function: { type: 'string' },
      'work-queue': { type: 'string' },
      out: { type: 'string' },
      vhost: { type: 'string' },
      'broker-version': { type: 'string' },
      rabbitmqctl: { type: 'string' },
      name: { type: 'string', multiple: true },
      yes: { type: 'boolean' },
    },
    { queue: 'work-queue' },
  );
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [command, ...extra] = positionals;
  if (command !== 'apply' && command !== 'verify' && command !== 'export' && command !== 'prune') {
    throw new UsageError(
      command === undefined ? 'say apply, verify, export or prune' : `unknown command ${JSON.stringify(command)}; expected apply, verify, export or prune`,
    );
  }
  if (command !== 'prune' && (values.name !== undefined || values.yes !== undefined)) throw new UsageError('--name and --yes are for prune only');
  const ctl = values.rabbitmqctl?.split(/\s+/).filter((word) => word !== '');
  if (command === 'prune') assertPruneFlags({ names: values.name ?? [], ctl });
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  if (command !== 'export' && (values.out !== undefined || values.vhost !== undefined || values['broker-version'] !== undefined)) {
    throw new UsageError('--out, --vhost and --broker-version are for export only');
  }
  if (command === 'export' && values.rabbitmqctl !== undefined) throw new UsageError('--rabbitmqctl is for apply and verify only');
  const targets = await queueTargets({ function: values.function, queue: values['work-queue'] }, process.env);
  process.stderr.write(overrideNote(targets));
  if (command === 'export') {
    const refused =
      values['broker-version'] !== undefined && targets.some((t) => t.config.delayMode === 'native')
        ? nativeBrokerRefusal(values['broker-version'])
        : undefined;
    if (refused !== undefined) throw refused;
    const plans = targets.map((t) => ({ ...t, plan: buildTopologyPlan({ ...topologyOptionsFromConfig(t.config), brokerVersion: values['broker-version'] }) }));
    return exportDefinitions(plans, values.out, values.vhost);
  }
  const [first] = targets;
  if (first === undefined) throw new UsageError('no queue to work on');
  const log = createLogger({ level: logLevelFrom(process.env.LOG_LEVEL) });
  // One connection for all: the queues share the broker settings, which are environment-only.
  const broker = await connectFromConfig(first.config, { connectionName: 'boomerang-topology', log });
  const brokerVersion = brokerVersionOf(broker.connection);
  const vhost = vhostOfConfig(first.config);
  if (command === 'prune') {
    try {
      return await pruneTargets(broker.connection, targets, { names: values.name ?? [], ctl, yes: values.yes === true, vhost });
    } finally {
      await broker.close();
    }
  }
  const readPolicy = ctl === undefined || ctl.length === 0 ? undefined : rabbitmqctlPolicyReader(ctl, vhost);
  try {
    let code = 0;
    for (const { label, config } of targets) {
      const plan = buildTopologyPlan({ ...topologyOptionsFromConfig(config), brokerVersion });
      if (targets.length > 1) process.stdout.write(`== ${label} (${config.workQueue})\n`);
      code = Math.max(
        code,
        command === 'apply'
          ? await apply(broker.connection, plan, config, { vhost, brokerVersion, readPolicy })
          : await verify(broker.connection, plan, vhost, readPolicy),
      );
    }
    return code;
  } finally {
    await broker.close();
  }
}

async function verify(connection: ChannelModel, plan: TopologyPlan, vhost: string, readPolicy: PolicyReader | undefined): Promise<number> {
  const report = await verifyTopology(connection, plan, { readPolicy });
  const verdict = report.ok ? 'topology is in order' : 'topology is NOT in order: see above';
  process.stdout.write(
    `${formatReport(report)}\n${said(formatVerifyAdvice(report, vhost))}${verdict}${report.warnings.length > 0 ? `, with ${report.warnings.length} warning(s)` : ''}\n`,
  );
  return report.ok ? 0 : 1;
}

/** Lines, each ending in a newline (nothing for none). */
function said(lines: readonly string[]): string {
  return lines.map((line) => `${line}\n`).join('');
}

type BrokerSide = { readonly vhost: string; readonly brokerVersion: string | undefined; readonly readPolicy: PolicyReader | undefined };

async function apply(connection: ChannelModel, plan: TopologyPlan, config: Config, { vhost, brokerVersion, readPolicy }: BrokerSide): Promise<number> {
  try {
    const report = await applyTopology(connection, plan, { readPolicy });
    const summary = `topology applied for ${config.workQueue} (${config.delayMode} mode, ${config.queueType} queues, RabbitMQ ${brokerVersion ?? 'of unknown version'})`;
    process.stdout.write(`${formatReport(report)}\n${said(formatWarnings(report.warnings, vhost))}${summary}\n`);
    return 0;
  } catch (error) {
    if (!isNamedError<TopologyMismatchError>(error, 'TopologyMismatchError')) throw error;
    process.stderr.write(`${error.name}: ${error.message}\n${said(formatWarnings(error.warnings, vhost))}`);
    return 1;
  }
}

async function exportDefinitions(
  plans: readonly (QueueTarget & { readonly plan: TopologyPlan })[],
  out: string | undefined,
  vhost: string | undefined,
): Promise<number> {
  const definitions = mergeDefinitions(plans.map(({ config, plan }) => topologyDefinitions(plan, vhost ?? vhostOfConfig(config))));
  const json = `${JSON.stringify(definitions, null, 2)}\n`;
  if (out === undefined) {
    process.stdout.write(json);
    return 0;
  }
  await writeFile(out, json);
  const { exchanges, queues, bindings } = definitions;
  process.stderr.write(
    `wrote ${exchanges.length} exchanges, ${queues.length} queues and ${bindings.length} bindings for ${plans.map((p) => p.config.workQueue).join(', ')} to ${out}\n`,
  );
  return 0;
}

/** `boomerang topology apply|verify|export`. */
const topologyCommand: CliCommand = {
  name: 'topology',
  summary: 'declare (apply), check (verify), export or prune the broker-side queues of the declared queues',
  usage: USAGE,
  run: main,
};

export { topologyCommand };
