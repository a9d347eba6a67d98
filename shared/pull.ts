import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { ConfirmPublisher } from './amqp/confirm-publisher.js';
import { connectBroker } from './amqp/connection.js';
import { ShortLivedConsumer } from './amqp/short-lived-consumer.js';
import { toBoomerangMessage } from './boomerang-message.js';
import { topologyOptionsFromConfig, type Config } from './config.js';
import { decideRetry, errorFacts } from './decide-retry.js';
import { DeliveryLedger } from './delivery-ledger.js';
import { disposeOfFailure, type DispositionDeps } from './dispositions.js';
import { BrokerConnectionError } from './errors.js';
import { readRetryNo } from './headers.js';
import type { Logger } from './logger.js';
import type { Handler } from './message.js';
import { emptySummary, type StopReason, type Summary } from './summary.js';
import { delayRoute } from './topology/plan.js';

type PullOptions = {
  readonly config: Config;
  readonly handler: Handler;
  /** Time this invocation may take, all included (Lambda: `getRemainingTimeInMillis()`). */
  readonly budgetMs: number;
  readonly log: Logger;
  /** @default Math.random */
  readonly random?: () => number;
};

/** Thrown when the invocation could not finish; carries what it did up to then. */
class PullAbortedError extends BrokerConnectionError {
  public constructor(message: string, public readonly summary: Summary, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PullAbortedError';
  }
}

/**
 * One invocation of the scheduled pull function: connect, consume the work queue with a short-lived
 * consumer (prefetch = BATCH_SIZE) until it is idle, MAX_MESSAGES were taken or the budget nears its
 * end, run the handler on each delivery with bounded concurrency, and ack, retry or park each one.
 * Whatever is not settled by the end goes back to the queue, and the connection is always closed.
 */
async function runPull(options: PullOptions): Promise<Summary> {
  const { config, log } = options;
  const startedAt = Date.now();
  // Keep the margin inside the budget even when a caller passes a tiny budget.
  const marginMs = Math.min(config.safetyMarginMs, options.budgetMs / 2);
  const stopTakingAt = startedAt + options.budgetMs - marginMs;
  const hardStopAt = startedAt + options.budgetMs - marginMs / 2;
  const summary = emptySummary();
  const broker = await connectBroker({ urls: config.amqpUrls, connectTimeoutMs: config.connectTimeoutMs, connectionName: config.functionName });
  let failure: Error | undefined;
  let closing = false;
  try {
    const channel = await broker.connection.createConfirmChannel();
    const channelClosed = new Promise<Error>((resolve) => {
      channel.on('error', (error: Error) => resolve(new BrokerConnectionError(`The channel closed: ${error.message}`, { cause: error })));
      channel.on('close', () => {
        if (!closing) resolve(new BrokerConnectionError('The channel closed'));
      });
    });
    const broken = Promise.race([broker.lost, channelClosed]);
    broken.then((error) => { failure ??= error; }, () => undefined);
    const ledger = new DeliveryLedger(channel, summary);
    await consumeUntilDone({ options, channel, ledger, summary, stopTakingAt, hardStopAt, broken: broken.then(() => undefined) });
    closing = failure === undefined;
    if (closing) await channel.close().catch(() => undefined);
  } catch (error) {
    failure ??= error as Error;
  } finally {
    await broker.close();
    summary.durationMs = Date.now() - startedAt;
  }
  if (failure !== undefined) {
    summary.stoppedBecause = /channel/i.test(failure.message) ? 'channel-closed' : 'connection-lost';
    throw new PullAbortedError(`Invocation ended early: ${failure.message}. Unsettled messages went back to ${config.workQueue}; the next invocation carries on.`, summary, { cause: failure });
  }
  return summary;
}

type LoopState = {
  readonly options: PullOptions;
  readonly channel: ConfirmChannel;
  readonly ledger: DeliveryLedger;
  readonly summary: Summary;
  readonly stopTakingAt: number;
  readonly hardStopAt: number;
  /** Resolves when the connection or channel breaks. */
  readonly broken: Promise<void>;
};

async function consumeUntilDone(state: LoopState): Promise<void> {
  const { options, channel, ledger, summary } = state;
  const { config, log } = options;
  const consumer = await ShortLivedConsumer.start(channel, config.workQueue, config.batchSize);
  const abort = new AbortController();
  const abortTimer = setTimeout(() => abort.abort(new Error('invocation budget exhausted')), Math.max(0, state.stopTakingAt - Date.now()));
  let isBroken = false;
  void state.broken.then(() => { isBroken = true; });
  let copyFailure: Error | undefined;
  const topology = topologyOptionsFromConfig(config);
  const deps: DispositionDeps = {
    publisher: new ConfirmPublisher(channel, config.publishTimeoutMs),
    ledger,
    log,
    delayRoute: (delayMs) => delayRoute(topology, delayMs),
    ackOrder: config.ackOrder,
    retryHeader: config.retryHeader,
    workQueue: config.workQueue,
    parkingQueue: config.parkingQueue,
    functionName: config.functionName,
    now: () => new Date(),
    onCopyFailed: (error) => {
      if (copyFailure === undefined) log.error('a copy was not confirmed; no more messages are taken in this invocation', { reason: error.message });
      copyFailure ??= error;
    },
  };
  const handling = new Set<Promise<void>>();
  const settling = new Set<Promise<void>>();
  const track = (set: Set<Promise<void>>, work: Promise<void>): void => {
    set.add(work);
    void work.finally(() => set.delete(work));
  };
  const handleOne = async (delivery: ConsumeMessage): Promise<void> => {
    const reading = readRetryNo(delivery.properties.headers, config.retryHeader);
    if (reading.warning) log.warn(reading.warning, { messageId: delivery.properties.messageId });
    const message = toBoomerangMessage(delivery, config.workQueue, reading.retryNo);
    try {
      await options.handler(message, { signal: abort.signal, functionName: config.functionName });
      ledger.ack(delivery, 'acked');
    } catch (thrown) {
      if (!ledger.isOpen(delivery)) return;
      // Cut off by the budget: it was not really tried, so it goes back without counting an attempt.
      if (abort.signal.aborted) {
        ledger.requeue(delivery);
        return;
      }
      const error = errorFacts(thrown);
      const decision = decideRetry({
        error: thrown,
        retryNo: reading.retryNo,
        policy: config.policy,
        rules: config.rules,
        messageType: delivery.properties.type,
        routingKey: message.routingKey,
        random: options.random ?? Math.random,
      });
      const stack = thrown instanceof Error ? thrown.stack : undefined;
      track(settling, disposeOfFailure(deps, { delivery, retryNo: reading.retryNo, error, stack, decision }));
    }
  };

  let stoppedBecause: StopReason = 'idle';
  for (;;) {
    if (isBroken) { stoppedBecause = 'connection-lost'; break; }
    if (copyFailure) { stoppedBecause = 'publish-failed'; break; }
    if (summary.received >= config.maxMessages) { stoppedBecause = 'max-messages'; break; }
    const untilStop = state.stopTakingAt - Date.now();
    if (untilStop <= 0) { stoppedBecause = 'budget'; break; }
    if (handling.size >= config.concurrency) {
      await Promise.race([...handling, state.broken]);
      continue;
    }
    const waitMs = Math.min(config.idleTimeoutMs, untilStop);
    const delivery = await Promise.race([consumer.take(waitMs), state.broken.then(() => undefined)]);
    if (delivery === undefined) {
      if (consumer.cancelledByBroker) { stoppedBecause = 'consumer-cancelled'; break; }
      // Nothing came although the prefetch window had room: the queue is idle.
      if (waitMs === config.idleTimeoutMs && ledger.outstanding < config.batchSize && !isBroken) { stoppedBecause = 'idle'; break; }
      continue;
    }
    ledger.received(delivery);
    // A delivery that raced the stop signal is given back untried.
    if (copyFailure) { ledger.requeue(delivery); stoppedBecause = 'publish-failed'; break; }
    track(handling, handleOne(delivery));
  }
  summary.stoppedBecause = stoppedBecause;
  clearTimeout(abortTimer);
  if (!isBroken) {
    await consumer.stop().catch(() => undefined);
    for (const delivery of consumer.takeBuffered()) {
      ledger.received(delivery);
      ledger.requeue(delivery);
    }
  }
  await settleOrGiveUp([...handling], state);
  await settleOrGiveUp([...settling], state);
  const givenBack = ledger.requeueAll();
  if (givenBack > 0) log.warn('messages not settled by the hard stop were returned to the queue', { count: givenBack });
  abort.abort(new Error('invocation over'));
}

/** Waits for the work in hand, but never past the hard stop nor after the connection broke. */
async function settleOrGiveUp(work: Promise<void>[], state: LoopState): Promise<void> {
  if (work.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const hardStop = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, state.hardStopAt - Date.now()));
  });
  await Promise.race([Promise.allSettled(work), hardStop, state.broken]);
  clearTimeout(timer);
}

export { PullAbortedError, runPull };
export type { PullOptions };
