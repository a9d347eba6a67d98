/**
 * What a quorum queue's delivery limit means for its messages, from its arguments and the broker's
 * major version. Measured here: RabbitMQ 4.3.6 drops a message after 20 failed deliveries when the
 * queue has no `x-delivery-limit` and no dead-letter target; `-1` lifts the limit on 4.x; RabbitMQ
 * 3.10.8 accepts `-1` but then drops a message at its FIRST failed delivery, and has no limit unless
 * one is set. On 4.3.6 a policy's `delivery-limit` of -1 lifts the default, and a positive limit from
 * either a policy or an argument wins over -1. Pure: AMQP cannot read policies, so callers say so.
 */
import type { ArgumentTable } from './types.js';

/** RabbitMQ 4.0+ gives quorum queues this delivery limit when none is set. */
const DEFAULT_DELIVERY_LIMIT_4X = 20;

/** How many failed deliveries a queue allows, and where that number comes from. */
type DeliveryLimit = { readonly kind: 'none'; readonly why: string } | { readonly kind: 'limit'; readonly limit: number; readonly why: string };

/** The RabbitMQ major version in a server's `version` property (`'4.3.6'` → 4), or `undefined`. */
function brokerMajor(version: string | undefined): number | undefined {
  const major = Number.parseInt(version ?? '', 10);
  return Number.isSafeInteger(major) ? major : undefined;
}

/** The delivery limit the queue's arguments give it on a broker of `major` version (no policy counted). */
function deliveryLimitOf(args: ArgumentTable, major: number): DeliveryLimit {
  if (args['x-queue-type'] !== 'quorum') return { kind: 'none', why: `a ${String(args['x-queue-type'] ?? 'classic')} queue has no delivery limit` };
  const raw = args['x-delivery-limit'];
  if (raw === undefined) {
    return major >= 4
      ? { kind: 'limit', limit: DEFAULT_DELIVERY_LIMIT_4X, why: `the RabbitMQ ${major}.x default, as it has no x-delivery-limit` }
      : { kind: 'none', why: `RabbitMQ ${major}.x quorum queues have none unless set` };
  }
  const limit = Number(raw);
  if (limit >= 0) return { kind: 'limit', limit, why: `its x-delivery-limit` };
  return major >= 4
    ? { kind: 'none', why: `x-delivery-limit ${limit} means none on RabbitMQ 4.x` }
    : { kind: 'limit', limit: 0, why: `x-delivery-limit ${limit} on RabbitMQ ${major}.x drops a message at its first failed delivery` };
}

/** Whether the queue's arguments name a dead-letter exchange (the default exchange `''` counts). */
function hasDeadLetterTarget(args: ArgumentTable): boolean {
  return typeof args['x-dead-letter-exchange'] === 'string';
}

export { brokerMajor, deliveryLimitOf, hasDeadLetterTarget };
export type { DeliveryLimit };
