/**
 * Everything the lifecycle of a message does differently between the modes, named in one place.
 * The lifecycle itself (core/attempt.ts) is the same for each; these settings, and how each mode
 * settles a verdict (see core/verdict.ts), are all that differ. `docs/pull-and-event.md` lists them.
 *
 * | setting          | pull                                        | event                                           |
 * |------------------|---------------------------------------------|-------------------------------------------------|
 * | `copyLimitBytes` | `MAX_MESSAGE_BYTES`                         | none: the broker took this very body from the producer, and it counts the body alone |
 * | `canDefer`       | a delay path exists                         | the same                                        |
 * | `giveBackCounts` | the broker raises `x-delivery-count` on a requeueing nack (3.x, 4.0-4.2) | false: a give-back is a fresh copy at the tail of its queue |
 * | `givesBackAsIs`  | true on 4.3+, where a requeueing nack counts nothing | false: a give-back is a copy |
 * | `defersByCopy`   | true: a deferral is a copy to the delay path        | true                                            |
 * | `ownReturnsHeader` | none: a retry is a fresh copy, its count starts at 0 | none                                   |
 * | `countsAcquired` | false: its own requeueing nacks raise `x-acquired-count` | true: only the event source mapping gives a delivery back, after a failed invocation |
 *
 * Native pull (`delayMode: 'native'`, 4.3+): no copy limit (nothing is copied), `canDefer` true (the
 * queue itself delays), `giveBackCounts` false (`released` is not counted), `givesBackAsIs` true,
 * `defersByCopy` false (the queue holds the message for its delay, uncopied), and `ownReturnsHeader`
 * names the annotation counting its own failed settlements, which raise `x-delivery-count` too.
 */
import type { Config } from '../config/config.js';

type ModeSettings = {
  /**
   * The largest body a copy may carry. A message over it is never copied: a failure parks it through
   * the broker (the work queue dead-letters it to the parking lot), and it is never deferred.
   * Undefined: no limit is checked.
   */
  readonly copyLimitBytes: number | undefined;
  /**
   * Whether an untried message can wait on the delay path (deferred). False when there is no delay
   * path: `MAX_RETRIES=0` without a retrying rule in `tiers` mode.
   */
  readonly canDefer: boolean;
  /**
   * Whether giving a message back raises its `x-delivery-count`, the count the crash-loop guard reads.
   * When it does, a message the invocation had no time for is deferred for the shortest delay instead,
   * so that only deliveries that reached a handler (or died with the process) count.
   */
  readonly giveBackCounts: boolean;
  /**
   * Whether a give-back leaves the message in its queue as it was, uncopied and uncounted (pull on
   * 4.3+, native). Then a message held when a pause outlasts the invocation goes back to its queue,
   * where the next invocations leave it until the pause ends; otherwise it is deferred for the pause
   * (a copy is then the only way to keep the broker's counts honest, or the only way at all: event).
   */
  readonly givesBackAsIs: boolean;
  /**
   * Whether deferring a message copies it (pull, event: to the delay path) rather than delaying it
   * where it is (native). With `givesBackAsIs`, what the breaker or a store that is down leaves untried
   * is then given back instead: no copy where a give-back keeps the broker's counts as honest.
   */
  readonly defersByCopy: boolean;
  /**
   * The header counting the returns the mode made itself (native: each retry and deferral is a failed
   * settlement, which raises `x-delivery-count`): the crash-loop guard counts only the rest. Undefined: none.
   */
  readonly ownReturnsHeader?: string;
  /**
   * Whether the crash-loop guard counts `x-acquired-count` (4.3+) as returns too, the larger of it and
   * `x-delivery-count`. True only where the mode never gives a delivery back itself (event mode), so
   * that every acquisition after the first followed a failed invocation, even one the broker did not
   * count (4.3 does not count a requeueing nack). @default false
   */
  readonly countsAcquired?: boolean;
};

type DelayPathConfig = Pick<Config, 'delayMode' | 'policy' | 'rules'> & { readonly tierDelaysMs: readonly number[] };

/** Whether the config has a delay path at all (exact mode always has; tiers mode needs a tier). */
function hasDelayPath(topology: Pick<DelayPathConfig, 'delayMode' | 'tierDelaysMs'>): boolean {
  return topology.delayMode === 'exact' || topology.tierDelaysMs.length > 0;
}

/**
 * The pull mode's settings. `brokerMajor` and `brokerMinor` are the connected broker's version:
 * RabbitMQ 4.3 stopped counting a requeueing nack in `x-delivery-count`.
 * @example pullSettings(config, topology, { major: 3, minor: 10 }) // { copyLimitBytes: 16777216, canDefer: true, giveBackCounts: true, givesBackAsIs: false, defersByCopy: true }
 */
function pullSettings(
  config: Pick<Config, 'maxMessageBytes'>,
  topology: Pick<DelayPathConfig, 'delayMode' | 'tierDelaysMs'>,
  broker: BrokerVersion | undefined,
): ModeSettings {
  const giveBackCounts = nackCounts(broker);
  return { copyLimitBytes: config.maxMessageBytes, canDefer: hasDelayPath(topology), giveBackCounts, givesBackAsIs: !giveBackCounts, defersByCopy: true };
}

/**
 * The event mode's settings: see the table above.
 * @example eventSettings(topology) // { copyLimitBytes: undefined, canDefer: true, giveBackCounts: false, givesBackAsIs: false, defersByCopy: true, countsAcquired: true }
 */
function eventSettings(topology: Pick<DelayPathConfig, 'delayMode' | 'tierDelaysMs'>): ModeSettings {
  return { copyLimitBytes: undefined, canDefer: hasDelayPath(topology), giveBackCounts: false, givesBackAsIs: false, defersByCopy: true, countsAcquired: true };
}

/** Native pull's settings: see the table above. */
function nativeSettings(ownReturnsHeader: string): ModeSettings {
  return { copyLimitBytes: undefined, canDefer: true, giveBackCounts: false, givesBackAsIs: true, defersByCopy: false, ownReturnsHeader };
}

type BrokerVersion = { readonly major: number; readonly minor: number };

/** 3.x and 4.0-4.2 count a requeueing nack; an unknown version is taken to count (the safe side). */
function nackCounts(broker: BrokerVersion | undefined): boolean {
  if (broker === undefined) return true;
  return broker.major < 4 || (broker.major === 4 && broker.minor < 3);
}

/** The major and minor of a version a broker announces (`"4.3.6"`), or undefined. */
function parseBrokerVersion(version: string | undefined): BrokerVersion | undefined {
  const match = /^(\d+)\.(\d+)/.exec(version ?? '');
  return match === null ? undefined : { major: Number(match[1]), minor: Number(match[2]) };
}

export { eventSettings, nackCounts, nativeSettings, parseBrokerVersion, pullSettings };
export type { ModeSettings };
