import { toBoomerangMessage } from '../message/boomerang-message.js';
import type { Config } from '../config/config.js';
import { checkCrashLoop, crashLoopFailure } from '../engine/crash-loop.js';
import { decideRetry, type ErrorFacts, errorFacts } from '../retry/decide-retry.js';
import { backoffDelayMs } from '../retry/backoff.js';
import type { IdempotencyGuard } from '../idempotency/guard.js';
import { guardRefusalOf, refusalFields, STORE_DOWN, STORE_FAILURES_TO_STOP } from '../idempotency/refusal.js';
import { HandlerCutOffError } from '../errors.js';
import { readRetryNo } from '../message/headers.js';
import type { Handler } from '../message/message.js';
import type { Outcome, Summary } from '../engine/summary.js';
import type { EventRecord } from './decode-event.js';
import { deferEventRecord, disposeOfEventFailure, type EventDispositionDeps, type EventFailure, requeueEventRecord } from './event-dispositions.js';

type SettleBatchOptions = {
  readonly records: readonly EventRecord[];
  readonly handler: Handler;
  readonly deps: EventDispositionDeps;
  readonly config: Pick<Config, 'retryHeader' | 'policy' | 'rules' | 'concurrency' | 'functionName' | 'crashLoopLimit'>;
  /** Epoch ms: no handler starts after this, and the running ones see their signal aborted. */
  readonly stopAt: number;
  /** Epoch ms: handlers still running (ignoring the abort) are given up; their attempts count. */
  readonly hardStopAt: number;
  /** In [0, 1), for the backoff jitter. */
  readonly random: () => number;
  /** Counted into as records settle. */
  readonly summary: Summary;
  /** Runs each handler call at most once per idempotency key. @default none */
  readonly idempotency?: IdempotencyGuard;
};

type SettleBatchResult = {
  /** The first copy that was not confirmed: the batch must fail and come back whole. */
  readonly failure: Error | undefined;
  /** True when the budget ran out before every record was handled. */
  readonly outOfTime: boolean;
};

/**
 * Runs the handler on each record (at most `concurrency` at once, in event order) and publishes what
 * each outcome needs: nothing for a success, a retry copy, a parked copy, or (records the budget left
 * untried) a requeue copy to the tail of their queue. A handler the budget cut off (it stopped at the
 * abort, or was still running at the hard stop) made an attempt: retry copy, or park past the limit.
 * A record the broker handed out `CRASH_LOOP_LIMIT` times is parked without calling the handler.
 * Each record is settled once. After the first
 * unconfirmed copy no handler starts: the whole batch comes back anyway, and every further handler
 * run would only be one more duplicate.
 */
async function settleBatch(options: SettleBatchOptions): Promise<SettleBatchResult> {
  const { records, deps, summary, config } = options;
  const settled = new Set<EventRecord>();
  const abort = new AbortController();
  const abortTimer = setTimeout(() => abort.abort(new Error('invocation budget exhausted')), Math.max(0, options.stopAt - Date.now()));
  let failure: Error | undefined;
  const publishing: Promise<void>[] = [];
  const retryNoOf = (record: EventRecord): number => readRetryNo(record.delivery.properties.headers, config.retryHeader).retryNo;
  /** Records whose handler was called: past the hard stop they are attempts, not untried. */
  const started = new Set<EventRecord>();
  let crashLoopsParked = 0;
  const guard = options.idempotency;
  let storeFailuresInARow = 0;

  /** Claims the record and publishes what its outcome needs; a record already settled is left alone. */
  const settle = (record: EventRecord, work: () => Promise<Outcome>): Promise<void> | undefined => {
    if (settled.has(record)) return undefined;
    settled.add(record);
    const done = work().then(
      (outcome) => { summary[outcome]++; },
      (error: Error) => {
        failure ??= error;
        deps.log.error('a copy was not confirmed; the whole batch will come back', { messageId: record.delivery.properties.messageId, queue: record.queue, reason: error.message });
      },
    );
    publishing.push(done);
    return done;
  };

  const handleOne = async (record: EventRecord): Promise<void> => {
    const reading = readRetryNo(record.delivery.properties.headers, config.retryHeader);
    const warnings = reading.warning === undefined ? record.notes : [...record.notes, reading.warning];
    if (warnings.length > 0) deps.log.warn('event message has unusable fields', { messageId: record.delivery.properties.messageId, queue: record.queue, warnings });
    if (record.problem !== undefined) return settle(record, () => disposeOfEventFailure(deps, record, undecodable(record.problem as string, reading.retryNo)));
    const crashLoop = checkCrashLoop(record.delivery.properties.headers, config.crashLoopLimit, crashLoopsParked);
    if (crashLoop.kind === 'park') {
      crashLoopsParked++;
      return settle(record, () => disposeOfEventFailure(deps, record, { retryNo: reading.retryNo, stack: undefined, ...crashLoopFailure(crashLoop, config.crashLoopLimit) }));
    }
    const defer = (why: ErrorFacts) => settle(record, () => deferEventRecord(deps, record, reading.retryNo, backoffDelayMs(reading.retryNo + 1, config.policy, options.random), why));
    // The store failed for the records before: the rest of the batch waits on the delay path untried.
    if (storeFailuresInARow >= STORE_FAILURES_TO_STOP) return defer(STORE_DOWN);
    started.add(record);
    const message = toBoomerangMessage(record.delivery, record.queue, reading.retryNo);
    const context = { signal: abort.signal, functionName: config.functionName };
    try {
      const outcome = guard === undefined ? await options.handler(message, context) : await guard.run(message, async () => { await options.handler(message, context); }, options.hardStopAt - Date.now());
      if (outcome !== undefined) {
        storeFailuresInARow = 0;
        if (outcome === 'duplicate') return settle(record, async () => 'skippedDuplicates');
        if (outcome === 'no-key') summary.withoutIdempotencyKey++;
      }
    } catch (thrown) {
      const refusal = guard === undefined ? undefined : guardRefusalOf(thrown);
      if (refusal !== undefined) {
        // Not an attempt: it comes back with the count it had, and another run (or the store, once back) decides.
        deps.log.warn(refusal === 'in-progress' ? 'idempotency: another run holds the message\'s key; deferred' : 'idempotency: the store failed; message deferred', { messageId: record.delivery.properties.messageId, queue: record.queue, ...refusalFields(thrown) });
        storeFailuresInARow = refusal === 'store-down' ? storeFailuresInARow + 1 : 0;
        if (storeFailuresInARow === STORE_FAILURES_TO_STOP) deps.log.warn('idempotency: the store failed for several records in a row; the rest of the batch is deferred untried', { failuresInARow: storeFailuresInARow, ...refusalFields(thrown) });
        return defer(errorFacts(thrown));
      }
      // Cut off by the budget: an attempt all the same, or a record that always outlasts the budget would loop forever.
      const error = abort.signal.aborted ? HandlerCutOffError.of('aborted by the budget', thrown) : thrown;
      return settle(record, () => disposeOfEventFailure(deps, record, failedAttempt(record, reading.retryNo, error, thrown)));
    }
    return settle(record, async () => 'acked');
  };

  /** What a failed attempt comes to; `handlerError` is what the handler threw, for the stack. */
  const failedAttempt = (record: EventRecord, retryNo: number, error: unknown, handlerError: unknown): EventFailure => {
    const decision = decideRetry({
      error,
      retryNo,
      policy: config.policy,
      rules: config.rules,
      messageType: record.delivery.properties.type,
      // The event has no routing key: the queue's name, or the first one a retried copy kept in its headers.
      routingKey: toBoomerangMessage(record.delivery, record.queue, retryNo).routingKey,
      random: options.random,
    });
    const failed: EventFailure = { retryNo, error: errorFacts(error), stack: handlerError instanceof Error ? handlerError.stack : undefined, decision };
    deps.metrics?.handlerError(failed.error.name);
    return failed;
  };

  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < records.length && failure === undefined && !abort.signal.aborted) await handleOne(records[next++] as EventRecord);
  };
  const workers = Promise.all(Array.from({ length: Math.min(config.concurrency, records.length) }, worker));
  await untilOrTimeout(workers, options.hardStopAt);
  clearTimeout(abortTimer);
  const outOfTime = abort.signal.aborted || records.some((record) => !settled.has(record));
  // Untried records go back to their queue, and the attempts still running count, so the batch can
  // still succeed; after a failure it comes back whole anyway.
  if (failure === undefined) {
    for (const record of records) {
      const retryNo = retryNoOf(record);
      if (!started.has(record)) void settle(record, () => requeueEventRecord(deps, record, retryNo));
      else void settle(record, () => disposeOfEventFailure(deps, record, failedAttempt(record, retryNo, HandlerCutOffError.of('still running at the hard stop', undefined), undefined)));
    }
  }
  await Promise.all(publishing);
  abort.abort(new Error('invocation over'));
  return { failure, outOfTime };
}

/** The failure an undecodable record is parked with. */
function undecodable(problem: string, retryNo: number): EventFailure {
  return {
    retryNo,
    error: { name: 'EventDecodeError', message: problem, retryable: false, retryAfterMs: undefined },
    stack: undefined,
    decision: { kind: 'park', reason: `undecodable event message: ${problem}` },
  };
}

async function untilOrTimeout(work: Promise<unknown>, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
  });
  await Promise.race([work, timeout]);
  clearTimeout(timer);
}

export { settleBatch };
export type { SettleBatchOptions, SettleBatchResult };
