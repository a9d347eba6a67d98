/**
 * What `verify` and `apply` say about the queues that can drop messages: the two whose delivery limit
 * can (the parking lot, which has no dead-letter target by design, and the team's work queue), and
 * classic delay queues, which dead-letter at most once. Pure: built from the plan, the arguments
 * `readArguments` found and the broker's major version.
 */
import { ConfigError } from '../errors.js';
import { type DeliveryLimit, deliveryLimitOf, hasDeadLetterTarget } from './delivery-limit.js';
import { deadLetterPolicy, noDeliveryLimitPolicy } from './policy-fix.js';
import type { ArgumentDifference, ArgumentTable, QueueRole, TopologyPlan, TopologyWarning } from './types.js';

/** The report detail for one queue, and its warning when messages can be dropped. */
type QueueCheck = { readonly detail?: string; readonly warning?: TopologyWarning };

const POLICIES_UNREADABLE = 'AMQP cannot read policies; see rabbitmqctl list_queues name policy effective_policy_definition';
const ONE_POLICY = 'Only one policy applies to a queue (the highest priority): if another already matches it, add these keys to that one instead.';

function droppedAfter(limit: DeliveryLimit & { kind: 'limit' }): string {
  return limit.limit === 0 ? 'at its first failed delivery' : `after ${limit.limit} failed deliveries`;
}

/**
 * Which reads of the parking lot count as failed deliveries: `boomerang parked` and the console give
 * back what they read with a requeueing nack, which RabbitMQ 3.x and 4.0-4.2 count (measured on
 * 3.10.8 and 4.0.5: 20 reads of a lot with 4.0's default limit dropped every message) and 4.3 does
 * not. Only the major is known here, so a 4.x broker is named by the versions that count.
 */
function readsThatCount(major: number): string {
  const reads = 'every read by `boomerang parked` or the console counts as one too';
  return major >= 4 ? `on RabbitMQ 4.0-4.2 ${reads}` : reads;
}

/** The parking lot's delivery-limit state; a warning when a parked message can be dropped. */
function parkingLotCheck(queue: string, current: ArgumentTable | undefined, major: number | undefined, incomplete?: string): QueueCheck {
  if (current === undefined) return { detail: `delivery limit not known: its arguments could not all be read (${incomplete ?? 'unknown'})` };
  if (major === undefined) return { detail: 'delivery limit not known: the broker did not say its version' };
  const limit = deliveryLimitOf(current, major);
  if (limit.kind === 'none') {
    const policies = current['x-queue-type'] === 'quorum' ? `; a policy's positive delivery-limit would still apply (${POLICIES_UNREADABLE})` : '';
    return { detail: `no delivery limit (${limit.why})${policies}` };
  }
  const risk =
    `parking lot '${queue}' has a delivery limit (${limit.why}) and no dead-letter target: a parked message is dropped ` +
    `${droppedAfter(limit)} (a crash or timeout while \`boomerang parked\` holds it, a lost connection; ${readsThatCount(major)}).`;
  const detail = `delivery limit ${limit.limit}: parked messages can be dropped`;
  if (current['x-delivery-limit'] === undefined) {
    const message = `${risk} Its arguments cannot be changed, but a policy can lift the default (unless one already does: ${POLICIES_UNREADABLE}). ${ONE_POLICY}`;
    return { detail, warning: { queue, message, fix: noDeliveryLimitPolicy(queue) } };
  }
  const message = `${risk} A policy cannot lift a limit the queue's arguments set: move its messages elsewhere (e.g. a shovel), delete it and run \`boomerang topology apply\`.`;
  return { detail, warning: { queue, message } };
}

function describeArguments(current: ArgumentTable, limit: DeliveryLimit): string {
  const type = String(current['x-queue-type'] ?? 'classic');
  const deliveries = limit.kind === 'none' ? 'no delivery limit' : `delivery limit ${limit.limit}`;
  const target = hasDeadLetterTarget(current)
    ? `dead-letters to exchange '${String(current['x-dead-letter-exchange'])}'${current['x-dead-letter-routing-key'] === undefined ? '' : ` key '${String(current['x-dead-letter-routing-key'])}'`}`
    : 'no dead-letter target';
  return `${type}, ${deliveries}, ${target}`;
}

/** The team's work queue, left alone; a warning when its delivery limit drops messages. */
function workQueueCheck(queue: string, parkingQueue: string, current: ArgumentTable | undefined, major: number | undefined, incomplete?: string): QueueCheck {
  const left = 'left to its team';
  if (current === undefined)
    return { detail: `${left}; its arguments could not all be read (${incomplete ?? 'unknown'}), so whether it can drop messages is not known` };
  if (major === undefined) return { detail: `${left}; the broker did not say its version, so whether it can drop messages is not known` };
  const limit = deliveryLimitOf(current, major);
  const detail = `${left} (${describeArguments(current, limit)})`;
  if (limit.kind === 'none' || hasDeadLetterTarget(current)) return { detail };
  const message =
    `work queue '${queue}' is a quorum queue with a delivery limit (${limit.limit}: ${limit.why}) and no dead-letter target: ` +
    `a message is dropped ${droppedAfter(limit)} (a handler crash, a Lambda timeout, a lost connection), unless a policy sets a ` +
    `dead-letter exchange (${POLICIES_UNREADABLE}). Apply leaves the work queue's arguments to its team and cannot set policies; ` +
    `this policy dead-letters such messages to the parking lot instead. ${ONE_POLICY}`;
  return { detail, warning: { queue, message, fix: deadLetterPolicy(queue, parkingQueue) } };
}

/**
 * Whether a difference is no difference in effect: on 4.x a parking lot with `x-delivery-limit` -1,
 * or without one (the warning covers that), where the plan says otherwise.
 */
function isTolerated(role: QueueRole, difference: ArgumentDifference, major: number | undefined): boolean {
  if (role !== 'parking' || difference.argument !== 'x-delivery-limit' || major === undefined || major < 4) return false;
  return difference.actual === undefined || Number(difference.actual) < 0;
}

/** Throws a `ConfigError` when `plan` sets `x-delivery-limit` -1, which RabbitMQ 3.x reads as "drop at once". */
function assertPlanFitsBroker(plan: TopologyPlan, major: number | undefined): void {
  if (major === undefined || major >= 4) return;
  const queue = plan.queues.find((q) => Number(q.arguments['x-delivery-limit']) < 0);
  if (queue === undefined) return;
  throw new ConfigError(
    `The topology was planned for RabbitMQ 4.x (x-delivery-limit -1 on '${queue.name}'), but the broker is ${major}.x, which ` +
      "drops a message at its first failed delivery with -1: build the plan with this broker's version (brokerVersion).",
  );
}

/**
 * A warning for the work queue when the plan's delay queues are classic; none otherwise. A classic
 * queue dead-letters at most once: a copy whose delay ends while its work queue is missing (deleted,
 * being re-created, a typo) has nowhere to go and is dropped, where a quorum delay queue
 * (at-least-once) keeps it until the work queue is back (a copy waiting 6 s was gone when the work
 * queue came back after 9 s; with quorum it was kept).
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

export { assertPlanFitsBroker, classicDelayWarning, isTolerated, ONE_POLICY, parkingLotCheck, POLICIES_UNREADABLE, workQueueCheck };
export type { QueueCheck };
