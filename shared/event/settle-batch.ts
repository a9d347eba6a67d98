import type { Config } from '../config/config.js';
import { Lifecycle } from '../core/attempt.js';
import { InFlight, unlessAborted } from '../core/in-flight.js';
import type { ModeSettings } from '../core/mode-settings.js';
import type { Pacer } from '../core/pacer.js';
import type { PauseStart } from '../core/queue-pause.js';
import type { Outcome } from '../observability/summary.js';
import type { Tally } from '../core/tally.js';
import type { Verdict } from '../core/verdict.js';
import type { IdempotencyGuard } from '../idempotency/guard.js';
import type { Handler } from '../message/message.js';
import { noMetrics } from '../observability/metrics.js';
import type { EventRecord } from './decode-event.js';
import { type EventDispositionDeps, settleEventVerdict } from './event-dispositions.js';

type SettleBatchOptions = {
  readonly records: readonly EventRecord[];
  readonly handler: Handler;
  readonly deps: EventDispositionDeps;
  readonly config: Pick<Config, 'retryHeader' | 'policy' | 'rules' | 'concurrency' | 'functionName' | 'crashLoopLimit' | 'breakerThreshold'>;
  readonly settings: ModeSettings;
  /** Epoch ms: no handler starts after this, and the running ones see their signal aborted. */
  readonly stopAt: number;
  /** Epoch ms: handlers still running (ignoring the abort) are given up; their attempts count. */
  readonly hardStopAt: number;
  /** In [0, 1), for the backoff jitter. */
  readonly random: () => number;
  /** Counted into as records settle. */
  readonly tally: Tally;
  /** Runs each handler call at most once per idempotency key. @default none */
  readonly idempotency?: IdempotencyGuard;
  /** Paces the handler starts (the queue's rate limit). @default none */
  readonly pacer?: Pacer;
  /** Epoch ms: the queue is paused until then (its marker): every record is deferred untried. @default none */
  readonly pausedUntil?: number;
  /** Told each pause a handler's answer starts or extends (runEvent marks it on the broker). @default none */
  readonly onPause?: (pause: PauseStart) => void;
};

type SettleBatchResult = {
  /** The first copy that was not confirmed: the batch must fail and come back whole. */
  readonly failure: Error | undefined;
  /** True when the budget ran out before every record was handled. */
  readonly outOfTime: boolean;
  /** The circuit breaker opened in this batch. */
  readonly breakerOpened: boolean;
};

/**
 * Hands each record, in event order, to the message lifecycle (core/attempt.ts) at the concurrency it
 * allows (one at a time until the first success, none once the breaker opened), and publishes what
 * each verdict needs: nothing for a success, a retry copy, a parked copy, a deferred copy (the queue
 * is paused, the breaker opened, the store is down), or a copy to the tail of its queue (no time left for it).
 * Each record is settled once. After the first unconfirmed copy no handler starts: the whole batch
 * comes back anyway, and every further handler run would only be one more duplicate.
 */
async function settleBatch(options: SettleBatchOptions): Promise<SettleBatchResult> {
  const { records, deps, tally } = options;
  const lifecycle = new Lifecycle<EventRecord>({
    config: options.config,
    handler: options.handler,
    guard: options.idempotency,
    settings: options.settings,
    log: deps.log,
    metrics: deps.metrics ?? noMetrics,
    random: options.random,
    tally,
    stopAt: options.stopAt,
    hardStopAt: options.hardStopAt,
    pacer: options.pacer,
    pausedUntil: options.pausedUntil,
    onPause: options.onPause,
  });
  const settled = new Set<EventRecord>();
  let failure: Error | undefined;
  const publishing = new InFlight();
  /** Claims the record and publishes what its verdict needs; resolves once the copy is confirmed (or failed). */
  const settle = (record: EventRecord, verdict: Verdict | undefined): Promise<void> | undefined => {
    if (verdict === undefined || settled.has(record)) return undefined;
    settled.add(record);
    if (verdict.kind === 'ack' && verdict.unkeyed) tally.unkeyed();
    const done = settleEventVerdict(deps, record, verdict).then(
      (outcome: Outcome) => tally.settle(outcome, record.delivery),
      (error: Error) => {
        failure ??= error;
        tally.unsettled(record.delivery, `copy not confirmed (${error.message}): the whole batch comes back`);
        deps.log.error('a copy was not confirmed; the whole batch will come back', {
          messageId: record.delivery.properties.messageId,
          queue: record.queue,
          reason: error.message,
        });
      },
    );
    publishing.add(done);
    return done;
  };
  const hardStop = new AbortController();
  const hardStopTimer = setTimeout(() => hardStop.abort(), Math.max(0, options.hardStopAt - Date.now()));
  const handling = new InFlight();
  for (const record of records) {
    if (failure !== undefined || hardStop.signal.aborted) break;
    while (lifecycle.stop === undefined && !lifecycle.signal.aborted && handling.size >= lifecycle.concurrency) {
      await unlessAborted(handling.oneFinished(), lifecycle.signal);
    }
    if (failure !== undefined) break;
    if (lifecycle.stop !== undefined) {
      void settle(record, lifecycle.untried(record.delivery, record));
      continue;
    }
    // Untried records wait for the end: they go back to the tail of their queue.
    if (lifecycle.signal.aborted) break;
    // A record holds its turn until its copy is confirmed: a failed copy then starts no further handler.
    handling.add(lifecycle.attempt(record.delivery, record).then((verdict) => settle(record, verdict)));
  }
  await unlessAborted(handling.allFinished(), hardStop.signal);
  clearTimeout(hardStopTimer);
  const outOfTime = lifecycle.signal.aborted || records.some((record) => !settled.has(record));
  // Untried records go back to their queue, and the attempts still running count, so the batch can
  // still succeed; after a failure it comes back whole anyway.
  if (failure === undefined) {
    for (const [, verdict, record] of lifecycle.cutOffRunning()) void settle(record, verdict);
    for (const record of records) if (!settled.has(record)) void settle(record, lifecycle.untried(record.delivery, record, true));
  }
  await publishing.allFinished();
  lifecycle.end();
  return { failure, outOfTime, breakerOpened: lifecycle.breakerOpened };
}

export { settleBatch };
export type { SettleBatchOptions, SettleBatchResult };
