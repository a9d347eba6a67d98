/**
 * Declares a `TopologyPlan` on the broker, idempotently. Every exchange and queue is first checked
 * passively, then declared with its planned arguments; the work queue is declared only when missing.
 *
 * Errors: apply tries everything, then throws ONE `TopologyMismatchError` listing every entity whose
 * arguments differ (its `kind`, `entity` and `argument` are the first one's); nothing is changed on
 * those entities. Missing entities are still created and bindings still made, so a second run after
 * fixing the listed entities completes the topology. Other broker failures are rethrown at once.
 */
import type { ChannelModel } from 'amqplib';
import {
  bind,
  type ChannelLender,
  declare,
  describeBinding,
  exists,
  lendChannels,
  type PlannedEntity,
  plannedEntities,
} from './broker-ops.js';
import { type ArgumentDifference, topologyMismatchError } from './mismatch.js';
import { type ApplyReport, type ApplyStatus, entityItem, type ReportItem } from './report.js';
import type { TopologyPlan } from './types.js';

type Applied = { readonly item: ReportItem<ApplyStatus>; readonly difference?: ArgumentDifference };

async function applyEntity(lender: ChannelLender, entity: PlannedEntity): Promise<Applied> {
  const { kind, spec } = entity;
  const found = await exists(lender, entity);
  if (found && kind === 'queue' && spec.onlyIfMissing) {
    const detail = 'left alone: its arguments belong to its team';
    return { item: { kind, name: spec.name, status: 'exists', detail } };
  }
  const comparison = await declare(lender, entity);
  if (comparison.equal) return { item: entityItem(kind, spec.name, found ? 'unchanged' : 'created') };
  const { difference } = comparison;
  return { item: entityItem(kind, spec.name, 'mismatch', difference), difference };
}

/**
 * Creates what is missing and checks what exists; see the module comment for how it fails.
 * Takes the connection, not a channel: a 404 or 406 closes the channel it happens on.
 * @example
 * const report = await applyTopology(connection, buildTopologyPlan(options));
 * console.log(formatReport(report));
 */
async function applyTopology(connection: ChannelModel, plan: TopologyPlan): Promise<ApplyReport> {
  const lender = lendChannels(connection);
  const items: ReportItem<ApplyStatus>[] = [];
  const differences: ArgumentDifference[] = [];
  try {
    for (const entity of plannedEntities(plan)) {
      const { item, difference } = await applyEntity(lender, entity);
      items.push(item);
      if (difference) differences.push(difference);
    }
    for (const binding of plan.bindings) {
      await bind(lender, binding);
      items.push({ kind: 'binding', name: describeBinding(binding), status: 'bound' });
    }
  } finally {
    await lender.close();
  }
  if (differences.length > 0) throw topologyMismatchError(differences);
  return { items };
}

export { applyTopology };
