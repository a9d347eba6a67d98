import type { ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { ConfirmPublisher } from '../amqp/confirm-publisher.js';
import { ShortLivedConsumer } from '../amqp/short-lived-consumer.js';
import { topologyOptionsFromConfig } from '../config/config.js';
import type { Origin } from '../core/attempt.js';
import { pullLifecycle } from '../core/pull-lifecycle.js';
import type { PauseStart } from '../core/queue-pause.js';
import { allFinishedBy, InFlight } from '../core/in-flight.js';
import { takeUntilStop } from '../core/take-loop.js';
import { type BrokerVersion, pullSettings } from '../core/mode-settings.js';
import type { StopReason } from '../observability/summary.js';
import type { Tally } from '../core/tally.js';
import type { Verdict } from '../core/verdict.js';
import { noMetrics } from '../observability/metrics.js';
import { createDelayRouter } from '../topology/plan.js';
import type { DeliveryLedger } from './delivery-ledger.js';
import type { PullOptions } from '../core/pull-options.js';
import { type PullSettleDeps, settleVerdict } from './settle-verdict.js';

const NEVER = new AbortController().signal;

type LoopState = {
  readonly options: PullOptions;
  readonly connection: ChannelModel;
  readonly channel: ConfirmChannel;
  readonly ledger: DeliveryLedger;
  readonly tally: Tally;
  /** The connected broker's version: whether a give-back raises `x-delivery-count`. */
  readonly broker: BrokerVersion | undefined;
  readonly stopTakingAt: number;
  readonly hardStopAt: number;
  /** Copies still unconfirmed by then are given up (their originals go back): room left to close. */
  readonly settleBy: number;
  /** Aborted when the connection or channel breaks. */
  readonly broken: AbortSignal;
  /** Told each pause a handler's answer starts or extends (runPull marks it on the broker). @default none */
  readonly onPause?: (pause: PauseStart) => void;
};

/**
 * The loop of one pull invocation: takes deliveries until the queue is idle, MAX_MESSAGES, the
 * budget's stop, a pause, an open breaker, a store that is down or a failed copy; hands each to the
 * message lifecycle (core/attempt.ts, at the concurrency it allows) and settles its verdict with the ledger;
 * then settles what is in hand by the hard stop and gives back the rest.
 * Resolves with the first copy failure, if any (the loop stopped taking messages at it).
 */
async function consumeUntilDone(state: LoopState): Promise<Error | undefined> {
  const { options, channel, ledger, tally } = state;
  const { config, log } = options;
  const metrics = options.metrics ?? noMetrics;
  const consumer = await ShortLivedConsumer.start(channel, config.workQueue, config.batchSize, { stopOn: state.broken });
  const topology = topologyOptionsFromConfig(config);
  const lifecycle = pullLifecycle(options, {
    settings: pullSettings(config, topology, state.broker),
    tally,
    stopTakingAt: state.stopTakingAt,
    hardStopAt: state.hardStopAt,
    onPause: state.onPause,
  });
  let copyFailure: Error | undefined;
  // Built on the first retry: with MAX_RETRIES=0 there is no delay path, and none is ever asked for.
  let route: ReturnType<typeof createDelayRouter> | undefined;
  const { ackOrder, retryHeader, workQueue, parkingQueue, functionName } = config;
  const copyContext = {
    log,
    metrics,
    retryHeader,
    functionName,
    parkingQueue,
    queue: workQueue,
    delayRoute: (delayMs: number) => (route ??= createDelayRouter(topology))(delayMs),
    now: () => new Date(),
  };
  const deps: PullSettleDeps = {
    ...copyContext,
    publisher: new ConfirmPublisher(channel, config.publishTimeoutMs, config.maxMessageBytes),
    maxMessageBytes: config.maxMessageBytes,
    ledger,
    ackOrder,
    workQueue,
    tally,
    onCopyFailed: (error) => {
      if (copyFailure === undefined) log.error('a copy was not confirmed; no more messages are taken in this invocation', { reason: error.message });
      copyFailure ??= error;
    },
    parkUncopyable: async (delivery, verdict) => {
      // Loaded on first use: a body over MAX_MESSAGE_BYTES is rare, and a cold start should not parse the argument reader.
      const { createUncopyablePark } = await import('./park-uncopyable.js');
      parkUncopyable ??= createUncopyablePark({ connection: state.connection, ledger, log, topology, publishTimeoutMs: config.publishTimeoutMs, copyContext });
      return parkUncopyable(delivery, verdict);
    },
  };
  let parkUncopyable: PullSettleDeps['parkUncopyable'] | undefined;
  const origin: Origin = { queue: workQueue };
  const handling = new InFlight();
  const settling = new InFlight();
  const settle = (delivery: ConsumeMessage, verdict: Verdict | undefined): void => {
    if (verdict === undefined || !ledger.isOpen(delivery)) return;
    const work = settleVerdict(deps, delivery, verdict);
    if (work !== undefined) settling.add(work);
  };
  const handle = (delivery: ConsumeMessage): Promise<void> => lifecycle.attempt(delivery, origin).then((verdict) => settle(delivery, verdict));

  const stoppedBecause = await takeUntilStop<ConsumeMessage>({
    config,
    lifecycle,
    tally,
    handling,
    stopTakingAt: state.stopTakingAt,
    broken: state.broken,
    take: (waitMs) => consumer.take(waitMs),
    outstanding: () => ledger.outstanding,
    cancelledByBroker: () => consumer.cancelledByBroker,
    stopFor: () => (copyFailure === undefined ? undefined : 'publish-failed'),
    handle: (delivery) => {
      ledger.received(delivery);
      // A delivery that raced the stop signal is given back untried.
      if (copyFailure) {
        ledger.requeue(delivery);
        return 'publish-failed';
      }
      handling.add(handle(delivery));
      return undefined;
    },
  });
  tally.stop(stoppedBecause);
  // What the prefetch brought and no handler saw: deferred untried when the queue is paused (for the
  // pause's remaining time), the breaker opened or the store is down, and (where a give-back would
  // count toward the crash-loop limit) when time or MAX_MESSAGES ran out. The rest goes back after
  // the consumer's cancel, below.
  // Given back only after the cancel: a requeue now would come straight back to this consumer.
  const giveBack: ConsumeMessage[] = [];
  if (!state.broken.aborted && copyFailure === undefined) {
    const outOfTime = lifecycle.stop === undefined;
    for (const delivery of consumer.takeBuffered()) {
      ledger.received(delivery);
      const verdict = lifecycle.untried(delivery, origin, outOfTime);
      if (verdict.kind === 'give-back') giveBack.push(delivery);
      else settle(delivery, verdict);
    }
  }
  // Settle the work in hand while the consumer still exists: a quorum queue may ignore acks sent
  // between the cancel and the channel close (rabbitmq-server#10327), which would bring those
  // messages back as duplicates. Deliveries that arrive meanwhile only wait in the buffer.
  // With idempotency on, running handlers are waited for even after the connection broke (up to the
  // hard stop): their keys then end completed or released, and the redelivered copies are skipped
  // duplicates or fresh runs. Left in progress, a key would hold its message until the hard stop and
  // then let it run again (a local process exits right after the invocation).
  await allFinishedBy(handling, state.hardStopAt, options.idempotency === undefined ? state.broken : NEVER);
  // Handlers still running ignored their signal: their attempts count, and whatever they return
  // later settles nothing. The handler may still act on the message: as with any retry, it must be idempotent.
  for (const [delivery, verdict] of lifecycle.cutOffRunning()) {
    if (!state.broken.aborted) settle(delivery as ConsumeMessage, verdict);
  }
  await allFinishedBy(settling, state.settleBy, state.broken);
  // Late acks (after the hard stop) are sent together after the cancel (see DeliveryLedger#hold).
  ledger.hold();
  if (!state.broken.aborted) {
    await consumer.stop().catch(() => undefined);
    // Arrived while the work in hand settled, never handed to a handler: back to the queue untouched.
    // A lost nack is harmless (the close requeues it too), where a deferred copy's lost ack would be a duplicate.
    for (const delivery of consumer.takeBuffered()) {
      ledger.received(delivery);
      giveBack.push(delivery);
    }
  }
  for (const delivery of giveBack) ledger.requeue(delivery);
  const givenBack = ledger.requeueAll();
  ledger.flush();
  if (givenBack > 0) log.warn('messages not settled by the hard stop were returned to the queue', { count: givenBack });
  // A handler still running when the loop stopped for another reason may have opened it.
  tally.breakerOpened(lifecycle.breakerOpened);
  lifecycle.end();
  return copyFailure;
}

export { consumeUntilDone };
export type { LoopState };
