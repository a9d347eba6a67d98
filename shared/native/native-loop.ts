import type { Origin } from '../core/attempt.js';
import { pullLifecycle } from '../core/pull-lifecycle.js';
import type { PauseStart } from '../core/queue-pause.js';
import { allFinishedBy, InFlight } from '../core/in-flight.js';
import { takeUntilStop } from '../core/take-loop.js';
import { nativeSettings } from '../core/mode-settings.js';
import type { Tally } from '../core/tally.js';
import type { Verdict } from '../core/verdict.js';
import { describeFailure, failureOf } from '../copy/failure-copy.js';
import type { Delivery } from '../message/copy-message.js';
import { noMetrics } from '../observability/metrics.js';
import type { Outcome as SummaryOutcome } from '../observability/summary.js';
import type { PullOptions } from '../core/pull-options.js';
import { NativeAnnotation, nativeOutcome } from './native-annotations.js';
import { fromAmqp10, type NativeMessage } from './native-delivery.js';
import type { NativeReceiver, Received } from './native-receiver.js';
import type { SettlementWriter } from './settlement-writer.js';

type NativeLoopState = {
  readonly options: PullOptions;
  readonly receiver: NativeReceiver;
  readonly writer: SettlementWriter;
  readonly tally: Tally;
  readonly stopTakingAt: number;
  readonly hardStopAt: number;
  /** Aborted when the connection breaks: nothing can be settled any more, the broker returns it all. */
  readonly broken: AbortSignal;
  /** Told each pause a handler's answer starts or extends (runNativePull marks it on the broker). @default none */
  readonly onPause?: (pause: PauseStart) => void;
};

/**
 * The loop of one native invocation, the native twin of pull/pull-loop.ts: takes deliveries until the
 * queue is idle, MAX_MESSAGES, the budget's stop, an open breaker or a store that is down; hands each
 * to the message lifecycle (core/attempt.ts) and settles its verdict with one AMQP 1.0 outcome, which
 * the broker carries out (native-annotations.ts). Nothing is published, so there is no copy to wait
 * for: a settlement is final once written. Then it stops the credit, settles or releases what is in
 * hand by the hard stop, and leaves the rest to go back with the link.
 */
async function settleUntilDone(state: NativeLoopState): Promise<void> {
  const { options, receiver, writer, tally } = state;
  const { config, log } = options;
  const metrics = options.metrics ?? noMetrics;
  // The retry count travels in an annotation (a header to the handler): RETRY_HEADER does not apply.
  const lifecycle = pullLifecycle(options, {
    settings: nativeSettings(NativeAnnotation.failedSettlements),
    retryHeader: NativeAnnotation.retryNo,
    tally,
    stopTakingAt: state.stopTakingAt,
    hardStopAt: state.hardStopAt,
    onPause: state.onPause,
  });
  const open = new Map<Delivery, Received>();
  const origin: Origin = { queue: config.workQueue };
  const settle = (delivery: Delivery, verdict: Verdict | undefined): void => {
    const received = open.get(delivery);
    if (verdict === undefined || received === undefined || state.broken.aborted) return;
    open.delete(delivery);
    const outcome = nativeOutcome(verdict, delivery, { now: Date.now(), functionName: config.functionName });
    writer.settle(received.delivery, outcome);
    receiver.settled();
    tally.settle(summaryOutcome(verdict), delivery);
    if (verdict.kind === 'retry') metrics.retryDelay(verdict.delayMs);
    // The same line the copy path writes for a park (copy/failure-copy.ts).
    if (verdict.kind === 'park')
      log.warn('message parked', { ...describeFailure(failureOf(delivery, verdict)), reason: verdict.reason, parkingQueue: config.parkingQueue });
  };
  const admit = (received: Received): NativeMessage => {
    tally.receive();
    const message = fromAmqp10(received.message);
    open.set(message.delivery, received);
    return message;
  };
  const handling = new InFlight();
  const handle = (received: Received): Promise<void> => {
    const { delivery, problem } = admit(received);
    return lifecycle.attempt(delivery, problem === undefined ? origin : { ...origin, problem }).then((verdict) => settle(delivery, verdict));
  };

  const stoppedBecause = await takeUntilStop<Received>({
    config,
    lifecycle,
    tally,
    handling,
    stopTakingAt: state.stopTakingAt,
    broken: state.broken,
    take: (waitMs) => receiver.take(waitMs),
    outstanding: () => receiver.outstanding,
    cancelledByBroker: () => receiver.cancelledByBroker,
    handle: (received) => {
      handling.add(handle(received));
      return undefined;
    },
  });
  tally.stop(stoppedBecause);
  // No more credit: after the drain nothing arrives, and what the credit brought no handler saw.
  // Deferred untried when the queue is paused, the breaker opened or the store is down; released (4.3 does not count it) when time ran out.
  if (!state.broken.aborted) {
    await receiver.stop();
    const outOfTime = lifecycle.stop === undefined;
    for (const received of receiver.takeBuffered()) {
      const { delivery } = admit(received);
      settle(delivery, lifecycle.untried(delivery, origin, outOfTime));
    }
  }
  await allFinishedBy(handling, state.hardStopAt, state.broken);
  // Handlers still running ignored their signal: their attempts count, and whatever they return later settles nothing.
  for (const [delivery, verdict] of lifecycle.cutOffRunning()) settle(delivery, verdict);
  await writer.flushed();
  tally.breakerOpened(lifecycle.breakerOpened);
  lifecycle.end();
}

/** What the summary counts a settlement as. */
function summaryOutcome(verdict: Verdict): SummaryOutcome {
  switch (verdict.kind) {
    case 'ack':
      return 'acked';
    case 'duplicate':
      return 'skippedDuplicates';
    case 'retry':
      return 'retried';
    case 'park':
      return 'parked';
    case 'defer':
      return 'deferred';
    case 'give-back':
      return 'requeued';
  }
}

export { settleUntilDone };
export type { NativeLoopState };
