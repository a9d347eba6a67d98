/**
 * `boomerang topology prune`: the CLI side of shared/topology/prune.ts. For each target queue, the
 * candidates are the names given with `--name` and, with `--rabbitmqctl`, every name of the vhost;
 * prints one line per name and what was (or, without `--yes`, would be) done.
 */
import type { ChannelModel } from 'amqplib';
import { topologyOptionsFromConfig } from '../config/config.js';
import { UsageError } from '../errors.js';
import { pruneCandidates, pruneTopology } from '../topology/prune.js';
import { rabbitmqctlNames } from '../topology/rabbitmqctl-names.js';
import type { QueueTarget } from './queue-flags.js';

type PruneFlags = {
  /** Names from the deploy's report (`--name`, repeatable). */
  readonly names: readonly string[];
  /** `--rabbitmqctl`, split into words: lists every name of the vhost. */
  readonly ctl: readonly string[] | undefined;
  readonly yes: boolean;
  readonly vhost: string;
};

/** Refuses a prune that has nowhere to find names: AMQP cannot list queues. */
function assertPruneFlags(flags: Pick<PruneFlags, 'names' | 'ctl'>): void {
  if (flags.names.length === 0 && (flags.ctl === undefined || flags.ctl.length === 0)) {
    throw new UsageError(
      "prune needs names: --name <queue or exchange> (repeatable; the deploy's report lists them), or --rabbitmqctl <command> to list the vhost",
    );
  }
}

/** Prunes each target; exit code 0 (a kept or absent name is no failure: nothing was lost). */
async function pruneTargets(connection: ChannelModel, targets: readonly QueueTarget[], flags: PruneFlags): Promise<number> {
  const listed = flags.ctl === undefined || flags.ctl.length === 0 ? [] : await rabbitmqctlNames(flags.ctl, flags.vhost);
  for (const { label, config } of targets) {
    const options = topologyOptionsFromConfig(config);
    // A listed name that is not this queue's own is not news: only the names given are always reported.
    const candidates = pruneCandidates(options, [...flags.names, ...listed]).filter((c) => c.kind !== 'left' || flags.names.includes(c.name));
    if (targets.length > 1) process.stdout.write(`== ${label} (${config.workQueue})\n`);
    const items = await pruneTopology(connection, candidates, { yes: flags.yes, queueType: config.queueType });
    for (const item of items) process.stdout.write(`${item.kind === 'left' ? 'name' : item.kind} ${item.name}: ${item.outcome}\n`);
    const deleted = items.filter((i) => i.deleted).length;
    process.stdout.write(
      items.length === 0
        ? `nothing to prune for ${config.workQueue}\n`
        : flags.yes
          ? `${deleted} deleted for ${config.workQueue}; nothing that held a message was touched\n`
          : `dry run for ${config.workQueue}: nothing deleted; add --yes to delete what is marked "would be deleted"\n`,
    );
  }
  return 0;
}

export { assertPruneFlags, pruneTargets };
