/**
 * What a CloudFormation custom resource carries of a queue's topology plan: the names of its queues and
 * exchanges and a digest of the whole plan. Computed at synth (the construct's definitions child) and
 * again by the resource's handler, from the same config, so that a changed plan changes the resource's
 * properties (CloudFormation sends an Update only then), and an Update's old properties say which names
 * the old plan had that the new one no longer needs.
 */
import { createHash } from 'node:crypto';
import { allExchanges } from './plan.js';
import type { TopologyPlan } from './types.js';

/** A queue or exchange of a plan, as `queue <name>` or `exchange <name>`. */
type PlanEntity = `${'queue' | 'exchange'} ${string}`;

/** The plan's entity names (declaration order, the marker last) and a digest of everything in it. */
type PlanSummary = { readonly entities: readonly PlanEntity[]; readonly digest: string };

/**
 * The summary of `plan`. Build the plan without a broker version for it: the version only decides the
 * parking lot's `x-delivery-limit`, which a deploy does not change, and synth knows no version.
 * @example planSummary(buildTopologyPlan(options)) // { entities: ['queue orders.parking', 'queue orders', ...], digest: '3f1c...' }
 */
function planSummary(plan: TopologyPlan): PlanSummary {
  const entities: PlanEntity[] = [...plan.queues.map((q): PlanEntity => `queue ${q.name}`), ...allExchanges(plan).map((x): PlanEntity => `exchange ${x.name}`)];
  // 16 hex digits of SHA-256: a change detector, not a secret.
  const digest = createHash('sha256').update(JSON.stringify(plan)).digest('hex').slice(0, 16);
  return { entities, digest };
}

/**
 * The entities of `before` that `after` no longer has: what an Update leaves on the broker (and
 * `boomerang topology prune` may remove once empty). Entries that are not `queue x`/`exchange x` are ignored.
 * @example noLongerNeeded(['queue o.delay.1000ms', 'queue o.delay.5000ms'], ['queue o.delay.1000ms']) // ['queue o.delay.5000ms']
 */
function noLongerNeeded(before: readonly string[], after: readonly string[]): PlanEntity[] {
  const kept = new Set(after);
  return before.filter((entity): entity is PlanEntity => isPlanEntity(entity) && !kept.has(entity));
}

function isPlanEntity(text: string): text is PlanEntity {
  return /^(queue|exchange) .+/s.test(text);
}

/** `queue orders.delay.1000ms` → `{ kind: 'queue', name: 'orders.delay.1000ms' }`. */
function parseEntity(entity: PlanEntity): { readonly kind: 'queue' | 'exchange'; readonly name: string } {
  const space = entity.indexOf(' ');
  return { kind: entity.slice(0, space) as 'queue' | 'exchange', name: entity.slice(space + 1) };
}

export { isPlanEntity, noLongerNeeded, parseEntity, planSummary };
export type { PlanEntity, PlanSummary };
