/**
 * When a pull invocation stops taking messages, written once for both engines that take them (the
 * 0-9-1 consumer of pull/pull-loop.ts and the AMQP 1.0 receiver of native/native-loop.ts). Each
 * engine says how it takes a delivery and what it does with one; this loop decides when to stop.
 */
import type { Config } from '../config/config.js';
import type { StopReason } from '../observability/summary.js';
import type { Lifecycle } from './attempt.js';
import { type InFlight, unlessAborted } from './in-flight.js';
import type { Tally } from './tally.js';

type TakeLoop<D> = {
  readonly config: Pick<Config, 'maxMessages' | 'idleTimeoutMs' | 'batchSize'>;
  readonly lifecycle: Pick<Lifecycle, 'stop' | 'signal' | 'concurrency'>;
  readonly tally: Pick<Tally, 'received'>;
  readonly stopTakingAt: number;
  /** Aborted when the connection breaks. */
  readonly broken: AbortSignal;
  /** The handlers running now: at the lifecycle's concurrency, the loop waits for one to finish. */
  readonly handling: InFlight;
  /** The next delivery, or `undefined` after `waitMs` with none. */
  take(waitMs: number): Promise<D | undefined>;
  /** Deliveries taken and not settled yet: below BATCH_SIZE with nothing arriving, the queue is idle. */
  outstanding(): number;
  /** The broker ended the consumer (the queue was deleted). */
  cancelledByBroker(): boolean;
  /** A reason of the engine's own to stop before the next take (pull: a copy failed). @default none */
  stopFor?(): StopReason | undefined;
  /** Hands a delivery on; a reason returned ends the loop (pull: a copy failed while it was taken). */
  handle(delivery: D): StopReason | undefined;
};

/**
 * Takes and hands on deliveries until the connection breaks, the lifecycle stops (a partner's pause,
 * an open breaker, a store that is down), MAX_MESSAGES were taken, the budget's stop, the queue is
 * idle, or the engine says so; resolves with the reason.
 * @example const stoppedBecause = await takeUntilStop({ config, lifecycle, tally, stopTakingAt, broken, handling, take, outstanding, cancelledByBroker, handle });
 */
async function takeUntilStop<D>(loop: TakeLoop<D>): Promise<StopReason> {
  const { config, lifecycle, broken } = loop;
  // A handler that ignores its signal must not hold the loop past the stop: waits end on either.
  const stopWaiting = AbortSignal.any([broken, lifecycle.signal]);
  for (;;) {
    if (broken.aborted) return 'connection-lost';
    const own = loop.stopFor?.();
    if (own !== undefined) return own;
    const stop = lifecycle.stop;
    if (stop !== undefined) return stop;
    if (loop.tally.received >= config.maxMessages) return 'max-messages';
    const untilStop = loop.stopTakingAt - Date.now();
    if (untilStop <= 0 || lifecycle.signal.aborted) return 'budget';
    if (loop.handling.size >= lifecycle.concurrency) {
      await unlessAborted(loop.handling.oneFinished(), stopWaiting);
      continue;
    }
    const waitMs = Math.min(config.idleTimeoutMs, untilStop);
    const delivery = await loop.take(waitMs);
    if (delivery === undefined) {
      if (loop.cancelledByBroker()) return 'consumer-cancelled';
      // Nothing came although the window had room: the queue is idle.
      if (waitMs === config.idleTimeoutMs && loop.outstanding() < config.batchSize && !broken.aborted) return 'idle';
      continue;
    }
    const ended = loop.handle(delivery);
    if (ended !== undefined) return ended;
  }
}

export { takeUntilStop };
export type { TakeLoop };
