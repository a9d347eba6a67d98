/**
 * A queue's rate limit, as the lifecycle meets it (core/attempt.ts): before each handler start it
 * waits for its turn. Without a store each invocation takes its share of the limit (`perSecond /
 * shares`); with one, every invocation on the queue takes its starts from one bucket in Redis, and a
 * store that fails makes the invocation fall back to its share: a limit never stops the queue.
 */
import { vhostOfConfig } from '../amqp/broker-endpoints.js';
import type { Config } from '../config/config.js';
import type { ResolvedRateLimit } from '../config/rate-limit.js';
import { describeStore } from '../idempotency/options.js';
import type { Logger } from '../observability/logger.js';
import { openRateStore } from '../pacing/open-rate-store.js';
import { rateKey, type RateStore } from '../pacing/rate-store.js';
import { type Clock, type Gate, SYSTEM_CLOCK, TurnLine } from './turn-line.js';

/** What the lifecycle waits on before each handler start. */
interface Pacer {
  /**
   * Resolves once the next handler may start, with how long it waited at the head of the line, or
   * with `undefined` when `signal` aborted first (the budget's stop): that delivery is not tried.
   */
  turn(signal: AbortSignal): Promise<number | undefined>;
  /** How the invocation paces now, for its summary line. */
  describe(): Pacing;
}

/** How an invocation paces its handler starts. */
type Pacing = {
  /** `share`: on its own, at `perSecond / shares`; `store`: from the queue's bucket in Redis, with every other invocation. */
  readonly limiter: 'share' | 'store';
  readonly perSecond: number;
  readonly shares: number;
  /** Why the store failed in this invocation, which then took its share instead. */
  readonly storeFailed?: string;
};

type PacerDeps = {
  /** The container's store, when the limit has one. @default none: the share */
  readonly store?: Promise<RateStore>;
  /** The queue's bucket in the store (`rateKey`). */
  readonly key: string;
  readonly log: Logger;
  /** @default the process's monotonic clock */
  readonly clock?: Clock;
};

/**
 * One invocation's pacer. Its line lets one start go at a time, in the order asked (turn-line.ts).
 * @example const pacer = createPacer({ perSecond: 20, shares: 2, store: undefined }, { key: rateKey('/', 'orders'), log }); // 10 starts a second
 */
function createPacer(limit: ResolvedRateLimit, deps: PacerDeps): Pacer {
  const clock = deps.clock ?? SYSTEM_CLOCK;
  const shareMs = (1000 * limit.shares) / limit.perSecond;
  const share: Gate = (now, last) => Math.max(0, last + shareMs - now);
  const { store } = deps;
  let storeFailed: string | undefined;
  const fromStore: Gate = (now, last) => {
    if (store === undefined || storeFailed !== undefined) return share(now, last);
    return store
      .then((opened) => opened.take(deps.key, 1000 / limit.perSecond))
      .catch((error: unknown) => {
        storeFailed = error instanceof Error ? error.message : String(error);
        const where = limit.store === undefined ? undefined : describeStore({ kind: 'redis', ...limit.store });
        deps.log.warn('rate limit: the store failed; this invocation takes its share of the limit from now on', {
          store: where,
          reason: storeFailed,
          perSecond: limit.perSecond,
          shares: limit.shares,
        });
        // Its share from the last start the store granted: the switch starts no burst.
        return share(clock.now(), last);
      });
  };
  const line = new TurnLine(fromStore, clock);
  return {
    turn: (signal) => line.turn(signal),
    describe: () => ({
      limiter: store === undefined || storeFailed !== undefined ? 'share' : 'store',
      perSecond: limit.perSecond,
      shares: limit.shares,
      ...(storeFailed === undefined ? {} : { storeFailed }),
    }),
  };
}

/**
 * The pacing of one function's container (core/lambda-function.ts): the store's client is opened
 * once, at the first invocation with a store, and each invocation gets a pacer of its own; none
 * without a rate limit, so that a queue without one pays nothing per message.
 * @example const pacerFor = containerPacing(); const pacer = pacerFor(config, log);
 */
function containerPacing(open: (spec: NonNullable<ResolvedRateLimit['store']>, log: Logger) => Promise<RateStore> = openRateStore) {
  let store: Promise<RateStore> | undefined;
  return (config: Pick<Config, 'rateLimit' | 'workQueue' | 'amqpSecret' | 'amqpUrls'>, log: Logger): Pacer | undefined => {
    const limit = config.rateLimit;
    if (limit === undefined) return undefined;
    if (limit.store !== undefined && store === undefined) {
      const opening = open(limit.store, log);
      // A store that could not even be loaded is tried again by the next invocation.
      opening.catch(() => {
        if (store === opening) store = undefined;
      });
      store = opening;
    }
    const vhost = vhostOfConfig(config);
    return createPacer(limit, { store: limit.store === undefined ? undefined : store, key: rateKey(vhost, config.workQueue), log });
  };
}

export { containerPacing, createPacer };
export type { Pacer };
