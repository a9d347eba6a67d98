/**
 * Which brokers can run `native` mode. A quorum queue holds a failed message until a delivery time
 * only from RabbitMQ 4.3 (`x-delayed-retry-type`); an older broker ignores the argument, so a
 * `modified` settlement would come straight back, and the retries would all be spent at once. Pure:
 * `topology apply`, `verify` and the pull function's first invocation ask it with the version the
 * broker announced.
 */
import { UnsupportedBrokerError } from '../errors.js';
import type { TopologyPlan } from './types.js';

/** The first RabbitMQ version whose quorum queues delay a failed message themselves. */
const NATIVE_MIN_VERSION = { major: 4, minor: 3 } as const;

/** What works on a broker older than that: both build their delay path out of queues and TTLs. */
const MODES_BEFORE_NATIVE = "use delayMode 'tiers' or 'exact' (DELAY_MODE=tiers or exact)";

/**
 * The error that refuses `native` mode on the broker announcing `version` (its `version` server
 * property), or `undefined` when that broker can run it. A broker that announces no version is
 * refused: nothing says it can.
 * @example nativeBrokerRefusal('3.10.8')?.message
 * // "RabbitMQ 3.10.8 cannot delay a message natively (4.3 or later is needed): use delayMode 'tiers' or 'exact' (DELAY_MODE=tiers or exact)"
 * @example nativeBrokerRefusal('4.3.6') // undefined
 */
function nativeBrokerRefusal(version: string | undefined): UnsupportedBrokerError | undefined {
  const match = /^(\d+)\.(\d+)/.exec(version ?? '');
  const needed = `${NATIVE_MIN_VERSION.major}.${NATIVE_MIN_VERSION.minor} or later is needed`;
  if (match === null) {
    const said = version === undefined ? 'did not say its RabbitMQ version' : `announced version ${JSON.stringify(version)}, which is not a RabbitMQ version`;
    return new UnsupportedBrokerError(`The broker ${said}, so it cannot be trusted to delay a message natively (${needed}): ${MODES_BEFORE_NATIVE}`, {
      brokerVersion: version,
    });
  }
  const [major, minor] = [Number(match[1]), Number(match[2])];
  if (major > NATIVE_MIN_VERSION.major || (major === NATIVE_MIN_VERSION.major && minor >= NATIVE_MIN_VERSION.minor)) return undefined;
  return new UnsupportedBrokerError(`RabbitMQ ${version} cannot delay a message natively (${needed}): ${MODES_BEFORE_NATIVE}`, { brokerVersion: version });
}

/** Whether the plan relies on the broker's delayed retry (a queue with `x-delayed-retry-type`). */
function needsNativeBroker(plan: Pick<TopologyPlan, 'queues'>): boolean {
  return plan.queues.some((q) => q.arguments['x-delayed-retry-type'] !== undefined);
}

/** Throws the refusal when `plan` needs a native broker and the one announcing `version` is not. */
function assertNativeBroker(plan: Pick<TopologyPlan, 'queues'>, version: string | undefined): void {
  const refusal = needsNativeBroker(plan) ? nativeBrokerRefusal(version) : undefined;
  if (refusal !== undefined) throw refusal;
}

export { assertNativeBroker, nativeBrokerRefusal, needsNativeBroker };
