/**
 * What classic queues cost, said at `apply` and `verify`. A classic queue dead-letters at most once:
 * a copy whose delay ends while its work queue is missing (deleted, being re-created, a typo) has
 * nowhere to go and is dropped, where a quorum delay queue (at-least-once) keeps it until the work
 * queue is back (a copy waiting 6 s was gone when the work queue came back after 9 s; with
 * quorum it was kept). Pure.
 */
import type { TopologyPlan, TopologyWarning } from './types.js';

/**
 * A warning for the work queue when the plan's delay queues are classic; none otherwise.
 * @example classicDelayWarning(buildTopologyPlan({ ...options, queueType: 'classic' }))?.message // 'classic delay queues drop ...'
 */
function classicDelayWarning(plan: Pick<TopologyPlan, 'queues'>): TopologyWarning | undefined {
  const delays = plan.queues.filter((q) => q.role === 'delay');
  const work = plan.queues.find((q) => q.role === 'work');
  if (work === undefined || !delays.some((q) => q.arguments['x-queue-type'] === 'classic')) return undefined;
  const longest = Math.max(...delays.map((q) => Number(q.arguments['x-message-ttl'] ?? 0)));
  const window = longest > 0 ? ` (up to ${longest} ms here: the longest delay)` : '';
  return {
    queue: work.name,
    message:
      `classic delay queues drop a retry whose delay ends while '${work.name}' is missing${window}: a classic queue dead-letters at most once, ` +
      `and a copy with nowhere to go is gone. Keep '${work.name}' in place while retries wait, or use QUEUE_TYPE=quorum (at-least-once dead-lettering keeps them). ` +
      `A classic work queue sets no x-delivery-count either, so CRASH_LOOP_LIMIT cannot see a crash loop on it.`,
  };
}

export { classicDelayWarning };
