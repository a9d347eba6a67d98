/**
 * The native function's start-of-invocation check (the native twin of copy/delay-path-check.ts): the
 * work queue and the parking lot exist, and the work queue's settings make a park dead-letter to the
 * parking lot at least once and hold a failed message until its delivery time. Without them the broker
 * DROPS a parked message (a quorum queue without a dead-letter target) and sends a retry straight back:
 * a queue deleted and declared again by hand, or `DELAY_MODE=native` pointed at a queue that was never
 * applied, fails the invocation before any message is taken.
 *
 * The comparison is `topology verify`'s (topology/native-check.ts), on the queue's own arguments: the
 * management API over AMQP shows no policy (measured on 4.3.6, see amqp10-management.ts), so a queue
 * whose settings come from a policy is refused too. For the settings that decide whether a message is
 * lost (the dead-letter keys, the strategy, `x-overflow`) an argument wins over any policy (measured),
 * so the arguments are conclusive for them.
 */
import type { Config } from '../config/config.js';
import { topologyOptionsFromConfig } from '../config/config.js';
import { TopologyDriftError } from '../core/invocation-errors.js';
import type { Logger } from '../observability/logger.js';
import { nativeWorkQueueCheck } from '../topology/native-check.js';
import { nativeWorkQueue } from '../topology/native-queue.js';
import type { ArgumentDifference, QueueSpec } from '../topology/types.js';
import type { QueueInfo } from './amqp10-management.js';

/** Reads one queue of the vhost; `undefined` when it does not exist. */
type QueueReader = (name: string) => Promise<QueueInfo | undefined>;

/** The settings without which native mode loses messages or does not delay, and what goes wrong without each. */
const NEEDED: Readonly<Record<string, string>> = {
  'x-queue-type': 'only a quorum queue delays and dead-letters as native mode settles',
  'x-dead-letter-exchange': 'a parked message would be dropped',
  'x-dead-letter-routing-key': 'a parked message would be dropped or sent elsewhere',
  'x-dead-letter-strategy': 'dead-lettering would be at most once: a parked message can be lost',
  'x-overflow': 'at-least-once dead-lettering needs reject-publish: a parked message can be lost',
  'x-delayed-retry-type': 'a retry would come back at once instead of after its delay',
};

const APPLY = '`boomerang topology apply`';

/** What the check found: a drift that stops the invocation, and differences that only pace or limit otherwise (logged). */
type NativeTopologyFinding = {
  readonly drift?: { readonly message: string; readonly missing: readonly string[] };
  readonly tolerated: readonly ArgumentDifference[];
};

function shown(value: string | undefined): string {
  return value === undefined ? 'none' : `'${value}'`;
}

/**
 * Judges what the broker has: `work` and `parking` as read (`undefined`: missing) against `spec`, the
 * work queue the config plans. Pure.
 * @example judgeNativeTopology(spec, 'orders.parked', { ...orders, arguments: { 'x-queue-type': 'quorum' } }, lot).drift?.missing
 * // ['orders: x-delayed-retry-type', 'orders: x-dead-letter-exchange', ...]
 */
function judgeNativeTopology(spec: QueueSpec, parkingQueue: string, work: QueueInfo | undefined, parking: QueueInfo | undefined): NativeTopologyFinding {
  const absent = [
    [spec.name, work],
    [parkingQueue, parking],
  ]
    .filter(([, info]) => info === undefined)
    .map(([name]) => `queue ${String(name)}`);
  if (absent.length > 0) {
    return {
      drift: {
        missing: absent,
        message: `Missing on the broker for delayMode 'native': ${absent.join(', ')}. No message was taken: run ${APPLY} with the current config.`,
      },
      tolerated: [],
    };
  }
  // `type` is the queue's type even when it was declared without x-queue-type.
  const current = { ...work?.arguments, 'x-queue-type': work?.type ?? 'classic' };
  const { differences } = nativeWorkQueueCheck(spec, current, undefined);
  const fatal = differences.filter((d) => Object.hasOwn(NEEDED, d.argument));
  const tolerated = differences.filter((d) => !Object.hasOwn(NEEDED, d.argument));
  if (fatal.length === 0) return { tolerated };
  const each = fatal.map((d) => `${d.argument} ${shown(d.actual)}, needs ${shown(d.expected)} (${NEEDED[d.argument]})`).join('; ');
  const message =
    `Work queue '${spec.name}' lacks in its own arguments what delayMode 'native' needs: ${each}. No message was taken. ` +
    "A policy does not count here: over AMQP the function sees only a queue's arguments, not its policy. " +
    `Declare the queue with them: move its messages elsewhere (e.g. a shovel), delete it and run ${APPLY} (\`boomerang topology verify\` shows the same differences).`;
  return { drift: { message, missing: fatal.map((d) => `${spec.name}: ${d.argument}`) }, tolerated };
}

/**
 * Reads the work queue and the parking lot (two requests, in parallel) and throws a
 * `TopologyDriftError` when native mode would lose messages or not delay them; differences that only
 * change the pacing of crashes or the delivery limit are logged as a warning.
 * @example await checkNativeTopology((name) => management.getQueue(name), config, log);
 */
async function checkNativeTopology(read: QueueReader, config: Config, log: Logger): Promise<void> {
  const spec = nativeWorkQueue(topologyOptionsFromConfig(config));
  const [work, parking] = await Promise.all([read(spec.name), read(config.parkingQueue)]);
  const { drift, tolerated } = judgeNativeTopology(spec, config.parkingQueue, work, parking);
  if (drift !== undefined) throw new TopologyDriftError(drift.message, { missing: drift.missing });
  if (tolerated.length > 0) {
    const differences = tolerated.map((d) => `${d.argument} ${shown(d.actual)} (the config plans ${shown(d.expected)})`).join(', ');
    log.warn(
      'native work queue settings differ from the config; messages are safe, but crashes are paced or limited otherwise: see boomerang topology verify',
      { queue: spec.name, differences },
    );
  }
}

export { checkNativeTopology, judgeNativeTopology };
