/**
 * The work queue of `native` mode: a RabbitMQ 4.3+ quorum queue that holds a failed message itself
 * until the time its settlement names (`x-opt-delivery-time` on an AMQP 1.0 `modified` outcome), and
 * dead-letters a parked one (`undeliverable_here`) to the parking lot. Pure; see docs/topology.md#native.
 *
 * Measured on RabbitMQ 4.3.6 (quorum queue, `x-delayed-retry-type: failed`):
 * - a delivery time in the future is honoured exactly, whatever `-min` and `-max` say: asked 200 ms
 *   under a min of 1000 and 5000 ms over a max of 3000, the message came back after 202 and 5002 ms;
 * - a delivery time not in the future (a delay of 0, or shorter than the trip to the broker) and a
 *   `modified` without one come back after `min × x-delivery-count`, capped at `max` (1003 ms for
 *   "1 s ago" with min 1000); with no min, at once;
 * - so do a 0-9-1 `basic.reject(requeue=true)` and a crash (a connection closed with the message
 *   unacked): 1, 2, 3 s with min 1000 and max 3000;
 * - with `x-delivery-limit` L, the delivery whose `x-delivery-count` is L is the last: failing it
 *   dead-letters the message (`x-death` reason `delivery_limit`) to the queue's dead-letter target.
 */
import { ConfigError } from '../errors.js';
import { LAST_DELIVERY_COUNT } from '../message/headers.js';
import { DEFAULT_EXCHANGE, deadLetterArguments, queueTypeArguments } from './queues.js';
import type { NativeRetryOptions, QueueSpec, TopologyOptions } from './types.js';

/**
 * Returns a native message may take on top of its retries and the crashes the guard allows, before
 * the broker's limit parks it: returns no Boomerang code ever sees, such as another 0-9-1 consumer's
 * `basic.reject`, or an AMQP 1.0 session the broker ends because it cannot convert the message.
 * (A deferral does not count: it is settled with `delivery_failed: false`, which leaves
 * `x-delivery-count` alone, measured on 4.3.6.)
 */
const NATIVE_SPARE_RETURNS = 100;

/**
 * The crashes a native message may take when the crash-loop guard is off (`CRASH_LOOP_LIMIT=0`): the
 * room RabbitMQ 4.x gives a quorum queue by default (20 returns), so turning the guard off never
 * parks sooner than a plain quorum queue would.
 */
const NATIVE_UNGUARDED_CRASH_ALLOWANCE = LAST_DELIVERY_COUNT;

/**
 * The native work queue's `x-delivery-limit`: every retry, every crash the guard allows, the spare
 * returns, plus one. Our own code (the retry decision, the crash-loop guard) therefore always parks
 * first; the broker's limit catches only a message that never reached it, and dead-letters it to the
 * parking lot (never drops it: the queue dead-letters at least once).
 * @example nativeDeliveryLimit({ maxRetries: 5, crashLoopLimit: 10 }) // 116 = 5 + 10 + 100 + 1
 */
function nativeDeliveryLimit(options: Pick<NativeRetryOptions, 'maxRetries' | 'crashLoopLimit'>): number {
  const crashes = options.crashLoopLimit > 0 ? options.crashLoopLimit : NATIVE_UNGUARDED_CRASH_ALLOWANCE;
  return options.maxRetries + crashes + NATIVE_SPARE_RETURNS + 1;
}

/**
 * `x-delayed-retry-min` and `-max`: the policy's own range, from its shortest delay to its longest
 * (`maxDelayMs`, which also caps a Retry-After). A delivery time in the future is never clamped to
 * them (measured, see above), so every delay Boomerang asks for is honoured exactly; they only pace
 * what comes back without one: a crash or a reject by another consumer returns after min × count,
 * capped at max, within the policy's range instead of at once. A delay of 0 (jitter on a 1 ms
 * initial delay) gives min 0, so that it comes back at once too.
 * @example nativeRetryRangeMs({ maxDelayMs: 3_600_000, native: { minDelayMs: 900, ... } }) // { minMs: 900, maxMs: 3600000 }
 */
function nativeRetryRangeMs(options: Pick<TopologyOptions, 'maxDelayMs'> & { readonly native: NativeRetryOptions }): { minMs: number; maxMs: number } {
  return { minMs: options.native.minDelayMs, maxMs: options.maxDelayMs };
}

/** The options' native part; throws a `ConfigError` when the mode is native and it is missing. */
function nativeOptionsOf(options: TopologyOptions): NativeRetryOptions {
  if (options.native === undefined) {
    throw new ConfigError(`delayMode 'native' needs the retry limits of '${options.workQueue}' (TopologyOptions.native; topologyOptionsFromConfig sets it)`);
  }
  return options.native;
}

/** The native work queue, declared with everything the mode needs when missing, and checked when it exists. */
function nativeWorkQueue(options: TopologyOptions): QueueSpec {
  const native = nativeOptionsOf(options);
  const { minMs, maxMs } = nativeRetryRangeMs({ ...options, native });
  return {
    name: options.workQueue,
    role: 'work',
    onlyIfMissing: false,
    arguments: {
      ...queueTypeArguments('quorum'),
      // The queue holds what a consumer settles as failed until its x-opt-delivery-time: no delay queue.
      'x-delayed-retry-type': 'failed',
      // Pace only what comes back without a delivery time (crashes, foreign rejects); see nativeRetryRangeMs.
      'x-delayed-retry-min': minMs,
      'x-delayed-retry-max': maxMs,
      // A park (undeliverable_here) and anything past the delivery limit go to the parking lot, at least once.
      ...deadLetterArguments('quorum', DEFAULT_EXCHANGE, options.parkingQueue),
      // Above every retry, crash and deferral we allow: the broker never parks before our code does.
      'x-delivery-limit': nativeDeliveryLimit(native),
    },
  };
}

export { NATIVE_SPARE_RETURNS, NATIVE_UNGUARDED_CRASH_ALLOWANCE, nativeDeliveryLimit, nativeWorkQueue };
