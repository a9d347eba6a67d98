/**
 * Declares a `TopologyPlan` on the broker, idempotently. Every exchange and queue is first checked
 * passively, then declared with its planned arguments; the work queue is declared only when missing.
 *
 * Errors: apply tries everything, then throws ONE `TopologyMismatchError` listing every entity whose
 * arguments differ, with every differing argument (its `kind`, `entity` and `argument` are the first
 * one's); nothing is changed on those entities. Missing entities are still created and bindings still
 * made, so a second run after fixing the listed entities completes the topology. Other broker failures
 * are rethrown at once. Where messages can be dropped and only a policy or the team can change it (the
 * work queue's or an older parking lot's delivery limit), the report carries a warning, not an error.
 * A native plan (`x-delayed-retry-type`) is refused on a broker older than 4.3 (`UnsupportedBrokerError`)
 * before anything is declared; its existing work queue is checked like the others (native-check.ts).
 */
import { assertPlanFitsBroker, classicDelayWarning, parkingLotCheck } from './queue-checks.js';
import type { ChannelModel } from 'amqplib';
import {
  bind,
  brokerVersionOf,
  type ChannelLender,
  declare,
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
import { topologyMismatchError } from './mismatch.js';
import { type ApplyReport, type ApplyStatus, entityItem, type ReportItem } from './report.js';
import type { ArgumentDifference, PolicyReader, TopologyPlan, TopologyWarning } from './types.js';

type Applied = { readonly item: ReportItem<ApplyStatus>; readonly warning?: TopologyWarning };

async function applyEntity(lender: ChannelLender, entity: PlannedEntity, context: ExamineContext): Promise<Applied> {
  const { kind, spec } = entity;
  const messageCount = await inspect(lender, entity);
  const created = messageCount === undefined && (await declare(lender, entity)).equal;
  if (created) {
    const { detail, warning } = kind === 'queue' && spec.role === 'parking' ? parkingLotCheck(spec.name, spec.arguments, context.major) : {};
    return { item: { ...entityItem(kind, spec.name, 'created'), ...(detail === undefined ? {} : { detail }) }, warning };
  }
  const { differences, detail, warning } = await examineExisting(lender, entity, context);
  const status = kind === 'queue' && spec.onlyIfMissing ? 'exists' : differences.length > 0 ? 'mismatch' : 'unchanged';
  const item = {
    ...entityItem(kind, spec.name, status, differences),
    ...(messageCount === undefined ? {} : { messageCount }),
    ...(detail === undefined ? {} : { detail }),
  };
  return { item, warning };
}

/**
 * Creates what is missing and checks what exists; see the module comment for how it fails.
 * Takes the connection, not a channel: a 404 or 406 closes the channel it happens on.
 * `options.readPolicy` reads a native work queue's policy (AMQP cannot); without it, its arguments alone are judged.
 * @example
 * const plan = buildTopologyPlan({ ...options, brokerVersion: brokerVersionOf(connection) });
 * const report = await applyTopology(connection, plan);
 * console.log(formatReport(report));
 */
async function applyTopology(connection: ChannelModel, plan: TopologyPlan, options: { readonly readPolicy?: PolicyReader } = {}): Promise<ApplyReport> {
  const version = brokerVersionOf(connection);
  assertNativeBroker(plan, version);
  const major = brokerMajor(version);
  assertPlanFitsBroker(plan, major);
  const parkingQueue = plan.queues.find((q) => q.role === 'parking')?.name ?? '';
  const context: ExamineContext = { major, parkingQueue, readPolicy: options.readPolicy };
  const lender = lendChannels(connection);
  const items: ReportItem<ApplyStatus>[] = [];
  const classic = classicDelayWarning(plan);
  const warnings: TopologyWarning[] = classic === undefined ? [] : [classic];
  try {
    for (const entity of plannedEntities(plan)) {
      const { item, warning } = await applyEntity(lender, entity, context);
      items.push(item);
      if (warning) warnings.push(warning);
    }
    for (const binding of plan.bindings) {
      await bind(lender, binding);
      items.push({ kind: 'binding', name: describeBinding(binding), status: 'bound' });
    }
    const differences: ArgumentDifference[] = items.flatMap((item) => item.differences ?? []);
    if (differences.length > 0) {
      const counts = new Map(items.flatMap((item) => (item.messageCount === undefined ? [] : [[item.name, item.messageCount] as const])));
      throw topologyMismatchError(differences, counts, warnings);
    }
    // Last, and only once everything above matched: the marker vouches for the whole delay path.
    for (const entity of markerEntities(plan)) items.push((await applyEntity(lender, entity, context)).item);
  } finally {
    await lender.close();
  }
  return { items, warnings };
}

export { applyTopology };
