/**
 * The `Reason` texts of the topology custom resource, short enough for a CloudFormation event (the
 * whole response is limited to 4096 bytes; the handler logs the full report beside them). Pure.
 */
import type { ArgumentDifference } from './types.js';
import { parseEntity, type PlanEntity } from './plan-summary.js';
import type { ApplyReport } from './report.js';

function shown(value: string | undefined): string {
  return value === undefined ? '(not set)' : `'${value}'`;
}

/** What to run for one differing entity, by what deleting it would lose. */
function remedyFor(kind: 'queue' | 'exchange', name: string, messageCount: number | undefined): string {
  if (kind === 'exchange') return `it holds no messages: delete it (rabbitmqctl delete_exchange '${name}')`;
  if (messageCount === 0) return `empty: delete it (rabbitmqctl delete_queue '${name}')`;
  return `${messageCount === undefined ? 'it may hold messages' : `${messageCount} message(s)`}: move them first (shovel), then delete it`;
}

/**
 * Why Create or Update failed: every differing argument of every entity, what to run about each, and that
 * nothing was changed.
 * @example mismatchReason('orders', differences, new Map([['orders.delay.1000ms', 0]]))
 */
function mismatchReason(queue: string, differences: readonly ArgumentDifference[], messageCounts: ReadonlyMap<string, number>): string {
  const byEntity = new Map<string, ArgumentDifference[]>();
  for (const d of differences) byEntity.set(`${d.kind} ${d.name}`, [...(byEntity.get(`${d.kind} ${d.name}`) ?? []), d]);
  const lines = [...byEntity.values()].map((group) => {
    const { kind, name } = group[0] as ArgumentDifference;
    const what = group.map((d) => `${d.argument} is ${shown(d.actual)}, the plan wants ${shown(d.expected)}`).join(', ');
    return `${kind} '${name}': ${what}; ${remedyFor(kind, name, kind === 'queue' ? messageCounts.get(name) : undefined)}.`;
  });
  return (
    `TopologyMismatchError: ${byEntity.size} existing ${byEntity.size === 1 ? 'entity differs' : 'entities differ'} from the plan of ${queue}; nothing was changed. ` +
    `${lines.join(' ')} Then deploy again, or change the queue's configuration back. \`boomerang topology verify --function ${queue}\` shows the same.`
  );
}

/** What an Update leaves behind and how to remove it; empty when nothing. */
function leftBehind(queue: string, entities: readonly PlanEntity[]): string {
  if (entities.length === 0) return '';
  const names = entities.map((e) => parseEntity(e).name);
  return ` No longer needed, left in place: ${names.join(', ')}; \`boomerang topology prune --function ${queue}${names.map((n) => ` --name ${n}`).join('')}\` lists them and, with --yes, deletes the empty ones.`;
}

/** Why Create or Update succeeded: what was created, what was there, and what the old plan leaves. */
function appliedReason(queue: string, report: ApplyReport, brokerVersion: string | undefined, dropped: readonly PlanEntity[]): string {
  const count = (status: string): number => report.items.filter((item) => item.status === status).length;
  const warnings = report.warnings.length === 0 ? '' : ` ${report.warnings.length} warning(s): ${report.warnings.map((w) => w.message).join(' ')}`;
  return `Topology of ${queue} applied on RabbitMQ ${brokerVersion ?? '(version unknown)'}: ${count('created')} created, ${count('unchanged') + count('exists')} already in place, ${count('bound')} bindings.${leftBehind(queue, dropped)}${warnings}`;
}

/** Why Delete succeeded: it deleted nothing, and what stays (message counts where they could be read). */
function keptReason(queue: string, kept: readonly { readonly entity: PlanEntity; readonly messageCount?: number }[], failure?: string): string {
  const listed = kept
    .map(({ entity, messageCount }) => `${parseEntity(entity).name}${messageCount === undefined ? '' : ` (${messageCount} messages)`}`)
    .join(', ');
  const unread = failure === undefined ? '' : ` (counts not read: ${failure})`;
  return `Nothing deleted: the queues and exchanges of ${queue} stay on the broker with their messages: ${listed || 'none recorded'}${unread}. Delete them by hand once the queue is retired.`;
}

export { appliedReason, keptReason, mismatchReason };
