/**
 * Compares a `TopologyPlan` with the broker, passively. For each exchange and queue: a passive check
 * (404 = `missing`), then a declare with the planned arguments, which creates nothing when the entity
 * exists and answers 406 when an argument differs. The work queue is only checked for existence.
 * Bindings cannot be read over AMQP 0.9.1, so they are reported `not-checked`, never guessed.
 * (An entity deleted between the check and the declare would be re-created; the window is one round trip.)
 */
import type { ChannelModel } from 'amqplib';
import {
  type ChannelLender,
  declare,
  describeBinding,
  exists,
  lendChannels,
  type PlannedEntity,
  plannedEntities,
} from './broker-ops.js';
import { entityItem, type ReportItem, type VerifyReport, type VerifyStatus } from './report.js';
import type { TopologyPlan } from './types.js';

const BINDINGS_NOT_READABLE = 'AMQP 0.9.1 cannot read bindings: see `rabbitmqctl list_bindings` or the management API';

async function verifyEntity(lender: ChannelLender, entity: PlannedEntity): Promise<ReportItem<VerifyStatus>> {
  const { kind, spec } = entity;
  if (!(await exists(lender, entity))) return entityItem(kind, spec.name, 'missing');
  if (kind === 'queue' && spec.onlyIfMissing) {
    return { kind, name: spec.name, status: 'ok', detail: 'exists; arguments not checked (they belong to its team)' };
  }
  const comparison = await declare(lender, entity);
  return comparison.equal
    ? entityItem(kind, spec.name, 'ok')
    : entityItem(kind, spec.name, 'different', comparison.difference);
}

/**
 * Reports, per entity, whether the broker matches the plan; never creates anything.
 * @example
 * const report = await verifyTopology(connection, buildTopologyPlan(options));
 * if (!report.ok) console.error(formatReport(report));
 */
async function verifyTopology(connection: ChannelModel, plan: TopologyPlan): Promise<VerifyReport> {
  const lender = lendChannels(connection);
  const items: ReportItem<VerifyStatus>[] = [];
  try {
    for (const entity of plannedEntities(plan)) items.push(await verifyEntity(lender, entity));
  } finally {
    await lender.close();
  }
  for (const binding of plan.bindings) {
    const name = describeBinding(binding);
    items.push({ kind: 'binding', name, status: 'not-checked', detail: BINDINGS_NOT_READABLE });
  }
  const ok = items.every((item) => item.status === 'ok' || item.status === 'not-checked');
  return { ok, items };
}

export { verifyTopology };
