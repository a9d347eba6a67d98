import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { ConfirmPublisher } from '../amqp/confirm-publisher.js';
import { ShortLivedConsumer } from '../amqp/short-lived-consumer.js';
import { backoffDelayMs } from '../retry/backoff.js';
import { toBoomerangMessage } from '../message/boomerang-message.js';
import { allowedConcurrency, recordOutcome, startBreaker } from './circuit-breaker.js';
import { topologyOptionsFromConfig } from '../config/config.js';
import { checkCrashLoop, crashLoopFailure } from './crash-loop.js';
import { decideRetry, type ErrorFacts, errorFacts } from '../retry/decide-retry.js';
import { type GuardRefusal, guardRefusalOf, refusalFields, STORE_DOWN, STORE_FAILURES_TO_STOP } from '../idempotency/refusal.js';
import type { DeliveryLedger } from './delivery-ledger.js';
import { deferUntried, describeDelivery, disposeOfFailure, type DispositionDeps } from './dispositions.js';
import { HandlerCutOffError } from '../errors.js';
import { readRetryNo } from '../message/headers.js';
import { allFinishedBy, InFlight, unlessAborted } from './in-flight.js';
import type { BoomerangMessage, HandlerContext } from '../message/message.js';
import { noMetrics } from '../observability/metrics.js';
import type { PullOptions } from './pull.js';
import type { StopReason, Summary } from './summary.js';
import { createDelayRouter } from '../topology/plan.js';

const NEVER = new AbortController().signal;

type LoopState = {
  readonly options: PullOptions;
  readonly channel: ConfirmChannel;
  readonly ledger: DeliveryLedger;
  readonly summary: Summary;
  readonly stopTakingAt: number;
  readonly hardStopAt: number;
  /** Copies still unconfirmed by then are given up (their originals go back): room left to close. */
  readonly settleBy: number;
  /** Aborted when the connection or channel breaks. */
  readonly broken: AbortSignal;
};

/**
 * The loop of one pull invocation: takes deliveries until the queue is idle, MAX_MESSAGES, the
 * budget's stop, an open breaker or a failure; runs the handler on each (bounded concurrency) and
 * acks, retries or parks it; then settles what is in hand by the hard stop and gives back the rest.
 */
/** Resolves with the first copy failure, if any (the loop stopped taking messages at it). */
async function consumeUntilDone(state: LoopState): Promise<Error | undefined> {
  const { options, channel, ledger, summary } = state;
  const { config, log } = options;
  const metrics = options.metrics ?? noMetrics;
  const random = options.random ?? Math.random;
  const consumer = await ShortLivedConsumer.start(channel, config.workQueue, config.batchSize, state.broken);
  const abort = new AbortController();
  // One context for every call: AbortController#signal is a checked getter, too slow to read per message.
  const handlerContext: HandlerContext = Object.freeze({ signal: abort.signal, functionName: config.functionName });
  const abortTimer = setTimeout(() => abort.abort(new Error('invocation budget exhausted')), Math.max(0, state.stopTakingAt - Date.now()));
  // A handler that ignores its signal must not hold the loop past the stop: waits end on either.
  const stopWaiting = AbortSignal.any([state.broken, abort.signal]);
  let copyFailure: Error | undefined;
  const topology = topologyOptionsFromConfig(config);
  // Built on the first retry: with MAX_RETRIES=0 there is no delay path, and none is ever asked for.
  let route: ReturnType<typeof createDelayRouter> | undefined;
  const { ackOrder, retryHeader, workQueue, parkingQueue, functionName } = config;
  const deps: DispositionDeps = {
    publisher: new ConfirmPublisher(channel, config.publishTimeoutMs, config.maxMessageBytes),
    maxMessageBytes: config.maxMessageBytes,
    delayRoute: (delayMs) => (route ??= createDelayRouter(topology))(delayMs),
    ledger, log, metrics, ackOrder, retryHeader, workQueue, parkingQueue, functionName,
    now: () => new Date(),
    onCopyFailed: (error) => {
      if (copyFailure === undefined) log.error('a copy was not confirmed; no more messages are taken in this invocation', { reason: error.message });
      copyFailure ??= error;
    },
  };
  let breaker = startBreaker(config.breakerThreshold);
  // A function, not a narrowed read: handlers change the breaker while the loop awaits.
  const breakerOpen = (): boolean => breaker.state === 'open';
  // MAX_RETRIES=0 without retrying rules has no delay path: untried messages can only go back.
  const canDefer = config.delayMode === 'exact' || topology.tierDelaysMs.length > 0;
  const handling = new InFlight();
  const settling = new InFlight();
  /**
   * Deliveries whose handler is running, with its retry count. Whoever removes one settles it: the
   * handler's own outcome, or the hard stop (after which a late outcome settles nothing).
   */
  const inHandler = new Map<ConsumeMessage, BoomerangMessage>();
  /** A delivery never handed to the handler after the breaker opened: to the delay path, same count. */
  const defer = (delivery: ConsumeMessage, why?: ErrorFacts): void => {
    if (!canDefer) {
      ledger.requeue(delivery);
      return;
    }
    const { retryNo } = readRetryNo(delivery.properties.headers, config.retryHeader);
    settling.add(deferUntried(deps, delivery, retryNo, backoffDelayMs(retryNo + 1, config.policy, random), why));
  };
  const guard = options.idempotency;
  let storeFailuresInARow = 0;
  /** The store failed STORE_FAILURES_TO_STOP times in a row: no more messages are taken in this invocation. */
  let storeDown = false;
  /** The guard refused to run it (key held elsewhere, store down): not an attempt, never parked, and no breaker outcome. */
  const deferRefused = (delivery: ConsumeMessage, refusal: GuardRefusal, thrown: unknown): void => {
    log.warn(refusal === 'in-progress' ? 'idempotency: another run holds the message\'s key; deferred' : 'idempotency: the store failed; message deferred', { ...describeDelivery(delivery), ...refusalFields(thrown) });
    // A key held elsewhere was read from the store: it answers.
    storeFailuresInARow = refusal === 'store-down' ? storeFailuresInARow + 1 : 0;
    if (storeFailuresInARow >= STORE_FAILURES_TO_STOP && !storeDown) {
      storeDown = true;
      log.warn('idempotency: the store failed for several messages in a row; no more messages are taken in this invocation', { failuresInARow: storeFailuresInARow, ...refusalFields(thrown) });
    }
    defer(delivery, errorFacts(thrown));
  };
  /** A failed attempt (thrown, or cut off by the budget) to its retry copy or the parking lot. */
  const disposeOfAttempt = (delivery: ConsumeMessage, message: BoomerangMessage, thrown: unknown, handlerError: unknown): void => {
    const error = errorFacts(thrown);
    metrics.handlerError(error.name);
    const { retryNo, routingKey } = message;
    const decision = decideRetry({ error: thrown, retryNo, policy: config.policy, rules: config.rules, messageType: delivery.properties.type, routingKey, random });
    // Formatting a stack costs ~30 µs; only a parked copy carries it (a retry copy never does).
    const stack = decision.kind === 'park' && handlerError instanceof Error ? handlerError.stack : undefined;
    settling.add(disposeOfFailure(deps, { delivery, retryNo, error, stack, decision }));
  };
  const handleOne = async (delivery: ConsumeMessage): Promise<void> => {
    const reading = readRetryNo(delivery.properties.headers, config.retryHeader);
    if (reading.warning) log.warn(reading.warning, { messageId: delivery.properties.messageId });
    const message = toBoomerangMessage(delivery, config.workQueue, reading.retryNo);
    inHandler.set(delivery, message);
    try {
      // No guard: the plain call, nothing more per message.
      const outcome = guard === undefined ? await options.handler(message, handlerContext) : await guard.run(message, async () => { await options.handler(message, handlerContext); }, state.hardStopAt - Date.now());
      if (!inHandler.delete(delivery)) return;
      if (outcome !== undefined) {
        storeFailuresInARow = 0;
        if (outcome === 'duplicate') {
          if (ledger.ack(delivery, 'skippedDuplicates') && log.debugEnabled) log.debug('duplicate acked without calling the handler: its idempotency key had completed', describeDelivery(delivery));
          return;
        }
        if (outcome === 'no-key') summary.withoutIdempotencyKey++;
      }
      breaker = recordOutcome(breaker, 'success');
      if (ledger.ack(delivery, 'acked') && log.debugEnabled) log.debug('message acked', { ...describeDelivery(delivery), retryNo: reading.retryNo });
    } catch (thrown) {
      if (!inHandler.delete(delivery) || !ledger.isOpen(delivery)) return;
      const refusal = guard === undefined ? undefined : guardRefusalOf(thrown);
      if (refusal !== undefined) {
        deferRefused(delivery, refusal, thrown);
        return;
      }
      // Cut off by the budget: an attempt all the same, or a message that always outlasts the budget
      // would come back first in every invocation and stall the queue behind it.
      if (handlerContext.signal.aborted) {
        disposeOfAttempt(delivery, message, HandlerCutOffError.of('aborted by the budget', thrown), thrown);
        return;
      }
      const error = errorFacts(thrown);
      const wasOpen = breakerOpen();
      breaker = recordOutcome(breaker, error.retryable ? 'retryable-failure' : 'other-failure');
      if (!wasOpen && breakerOpen()) log.warn('circuit breaker opened: no more handler calls in this invocation; untried messages are deferred', { failuresInARow: breaker.failuresInARow, errorName: error.name });
      disposeOfAttempt(delivery, message, thrown, thrown);
    }
  };

  let crashLoopsParked = 0;
  let stoppedBecause: StopReason = 'idle';
  for (;;) {
    if (state.broken.aborted) { stoppedBecause = 'connection-lost'; break; }
    if (copyFailure) { stoppedBecause = 'publish-failed'; break; }
    if (breakerOpen()) { stoppedBecause = 'breaker-open'; break; }
    if (storeDown) { stoppedBecause = 'idempotency-store-down'; break; }
    if (summary.received >= config.maxMessages) { stoppedBecause = 'max-messages'; break; }
    const untilStop = state.stopTakingAt - Date.now();
    if (untilStop <= 0 || abort.signal.aborted) { stoppedBecause = 'budget'; break; }
    if (handling.size >= allowedConcurrency(breaker, config.concurrency)) {
      await unlessAborted(handling.oneFinished(), stopWaiting);
      continue;
    }
    const waitMs = Math.min(config.idleTimeoutMs, untilStop);
    const delivery = await consumer.take(waitMs);
    if (delivery === undefined) {
      if (consumer.cancelledByBroker) { stoppedBecause = 'consumer-cancelled'; break; }
      // Nothing came although the prefetch window had room: the queue is idle.
      if (waitMs === config.idleTimeoutMs && ledger.outstanding < config.batchSize && !state.broken.aborted) { stoppedBecause = 'idle'; break; }
      continue;
    }
    ledger.received(delivery);
    // A delivery that raced the stop signal is given back untried.
    if (copyFailure) { ledger.requeue(delivery); stoppedBecause = 'publish-failed'; break; }
    if (breakerOpen()) { defer(delivery); stoppedBecause = 'breaker-open'; break; }
    if (storeDown) { defer(delivery, STORE_DOWN); stoppedBecause = 'idempotency-store-down'; break; }
    const crashLoop = checkCrashLoop(delivery.properties.headers, config.crashLoopLimit, crashLoopsParked);
    if (crashLoop.kind === 'park') {
      crashLoopsParked++;
      const { retryNo } = readRetryNo(delivery.properties.headers, config.retryHeader);
      settling.add(disposeOfFailure(deps, { delivery, retryNo, stack: undefined, ...crashLoopFailure(crashLoop, config.crashLoopLimit) }));
      continue;
    }
    handling.add(handleOne(delivery));
  }
  summary.stoppedBecause = stoppedBecause;
  clearTimeout(abortTimer);
  // An open breaker (or a store that is down) sends what is in hand to the delay path untried, before the settle below.
  if (stoppedBecause === 'breaker-open' || stoppedBecause === 'idempotency-store-down') {
    const why = stoppedBecause === 'breaker-open' ? undefined : STORE_DOWN;
    for (const delivery of consumer.takeBuffered()) {
      ledger.received(delivery);
      defer(delivery, why);
    }
  }
  // Settle the work in hand while the consumer still exists: a quorum queue may ignore acks sent
  // between the cancel and the channel close (rabbitmq-server#10327), which would bring those
  // messages back as duplicates. Deliveries that arrive meanwhile only wait in the buffer.
  // With idempotency on, running handlers are waited for even after the connection broke (up to the
  // hard stop): their keys then end completed or released, and the redelivered copies are skipped
  // duplicates or fresh runs. Left in progress, a key would hold its message until the hard stop and
  // then let it run again (a local process exits right after the invocation).
  await allFinishedBy(handling, state.hardStopAt, guard === undefined ? state.broken : NEVER);
  // Handlers still running ignored their signal: their attempts count, and whatever they return
  // later settles nothing. The handler may still act on the message: as with any retry, it must be idempotent.
  for (const [delivery, message] of inHandler) {
    inHandler.delete(delivery);
    if (!state.broken.aborted && ledger.isOpen(delivery)) disposeOfAttempt(delivery, message, HandlerCutOffError.of('still running at the hard stop', undefined), undefined);
  }
  await allFinishedBy(settling, state.settleBy, state.broken);
  // Late acks (after the hard stop) are sent together after the cancel (see DeliveryLedger#hold).
  ledger.hold();
  if (!state.broken.aborted) {
    await consumer.stop().catch(() => undefined);
    // Never handed to the handler: back to the queue untouched. A lost nack is harmless (the close
    // requeues it too), where a deferred copy's lost ack would be a duplicate.
    for (const delivery of consumer.takeBuffered()) {
      ledger.received(delivery);
      ledger.requeue(delivery);
    }
  }
  const givenBack = ledger.requeueAll();
  ledger.flush();
  if (givenBack > 0) log.warn('messages not settled by the hard stop were returned to the queue', { count: givenBack });
  // A handler still running when the loop stopped for another reason may have opened it.
  summary.breakerOpened = breakerOpen();
  abort.abort(new Error('invocation over'));
  return copyFailure;
}

export { consumeUntilDone };
export type { LoopState };
