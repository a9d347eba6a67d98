/**
 * Compares a `TopologyPlan` with the broker, passively. For each exchange and queue: a passive check
 * (404 = `missing`), then a declare with the planned arguments, which creates nothing when the entity
 * exists and answers 406 naming one differing argument; `readArguments` follows them to list them all.
 * The work queue's arguments are its team's: read only to warn when its delivery limit drops messages.
 * Bindings and policies cannot be read over AMQP 0.9.1, so bindings are reported `not-checked`, and
 * warnings say what a policy could change. (An entity deleted between the check and the declare would
 * be re-created; the window is one round trip.) A native plan is refused on a broker older than 4.3
 * (`UnsupportedBrokerError`), and its work queue is checked from its arguments and, given a
 * `readPolicy`, its effective policy (native-check.ts).
 */
import { assertPlanFitsBroker, classicDelayWarning } from './queue-checks.js';
import type { ChannelModel } from 'amqplib';
import {
  brokerVersionOf,
  type ChannelLender,
  describeBinding,
  inspect,
  lendChannels,
  markerEntities,
  type PlannedEntity,
  plannedEntities,
} from './broker-ops.js';
import { brokerMajor } from './delivery-limit.js';
import { assertNativeBroker } from './native-broker.js';
import { type ExamineContext, examineExisting } from './examine.js';
import { entityItem, type ReportItem, type VerifyReport, type VerifyStatus } from './report.js';
import type { PolicyReader, TopologyPlan, TopologyWarning } from './types.js';

const BINDINGS_NOT_READABLE = 'AMQP 0.9.1 cannot read bindings: see `rabbitmqctl list_bindings` or the management API';

type Verified = { readonly item: ReportItem<VerifyStatus>; readonly warning?: TopologyWarning };

async function verifyEntity(lender: ChannelLender, entity: PlannedEntity, context: ExamineContext): Promise<Verified> {
  const { kind, spec } = entity;
  const messageCount = await inspect(lender, entity);
  if (messageCount === undefined) return { item: entityItem(kind, spec.name, 'missing') };
  const { differences, detail, warning } = await examineExisting(lender, entity, context);
  const item = {
    ...entityItem(kind, spec.name, differences.length > 0 ? 'different' : 'ok', differences),
    ...(kind === 'queue' ? { messageCount } : {}),
    ...(detail === undefined ? {} : { detail }),
  };
  return { item, warning };
}

/**
 * Reports, per entity, whether the broker matches the plan, and where messages can be dropped;
 * never creates anything. `options.readPolicy` reads a native work queue's policy (AMQP cannot).
 * @example
 * const report = await verifyTopology(connection, buildTopologyPlan({ ...options, brokerVersion: brokerVersionOf(connection) }));
 * if (!report.ok) console.error(formatReport(report));
 */
async function verifyTopology(connection: ChannelModel, plan: TopologyPlan, options: { readonly readPolicy?: PolicyReader } = {}): Promise<VerifyReport> {
  const version = brokerVersionOf(connection);
  assertNativeBroker(plan, version);
  const major = brokerMajor(version);
  assertPlanFitsBroker(plan, major);
  const parkingQueue = plan.queues.find((q) => q.role === 'parking')?.name ?? '';
  const context: ExamineContext = { major, parkingQueue, readPolicy: options.readPolicy };
  const lender = lendChannels(connection);
  const items: ReportItem<VerifyStatus>[] = [];
  const classic = classicDelayWarning(plan);
  const warnings: TopologyWarning[] = classic === undefined ? [] : [classic];
  try {
    for (const entity of [...plannedEntities(plan), ...markerEntities(plan)]) {
      const { item, warning } = await verifyEntity(lender, entity, context);
      items.push(item);
      if (warning) warnings.push(warning);
    }
  } finally {
    await lender.close();
  }
  for (const binding of plan.bindings) {
    const name = describeBinding(binding);
    items.push({ kind: 'binding', name, status: 'not-checked', detail: BINDINGS_NOT_READABLE });
  }
  const ok = items.every((item) => item.status === 'ok' || item.status === 'not-checked');
  return { ok, items, warnings };
}

export { verifyTopology };
