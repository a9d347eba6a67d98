/**
 * The handler's call through the idempotency guard, for the lifecycle (core/attempt.ts): at most once
 * per key, with only the call itself holding a handler slot and running against its deadline, and the
 * store's refusals counted: STORE_FAILURES_TO_STOP in a row, and the store is down for the invocation.
 */
import { HandlerNotStartedError } from '../errors.js';
import type { IdempotencyGuard, IdempotencyOutcome } from '../idempotency/guard.js';
import { type GuardRefusal, refusalFields, STORE_FAILURES_TO_STOP } from '../idempotency/refusal.js';
import type { Delivery } from '../message/copy-message.js';
import type { BoomerangMessage, Handler } from '../message/message.js';
import type { AttemptSpan } from '../observability/attempt-tracer.js';
import type { Logger } from '../observability/logger.js';
import type { AttemptDeadlines } from './attempt-deadlines.js';
import { HandlerSlots } from './handler-slots.js';
import type { Origin } from './lifecycle-options.js';
import type { Pause } from './pause.js';

/** Whether an attempt's call holds a handler slot (core/handler-slots.ts): one per attempt. */
type SlotHold = { held: boolean };

type GuardedCallOptions = {
  readonly guard: IdempotencyGuard;
  readonly handler: Handler;
  readonly log: Logger;
  readonly deadlines: AttemptDeadlines;
  readonly pause: Pause;
  /** Epoch ms: a pause that lasts past it is not waited out. */
  readonly stopAt: number;
  /** Epoch ms: what the guard keeps a key in progress for. */
  readonly hardStopAt: number;
  /** Aborted at the budget's stop or when the invocation stops for good: the waits for a slot or a pause's end leave the line. */
  readonly leaveLine: AbortSignal;
  /** How many handlers may run at once now. */
  readonly concurrency: () => number;
  /** Whether the invocation stopped taking handlers (breaker, store down, paused past the stop). */
  readonly stopped: () => boolean;
  /** Told once, when the store is found down. */
  readonly onStoreDown: () => void;
};

/**
 * The guarded calls of one invocation.
 * @example
 * const calls = new GuardedCall({ guard, handler, log, deadlines, pause, stopAt, hardStopAt, leaveLine, concurrency, stopped, onStoreDown });
 * const outcome = await calls.run(message, span, false, { held: false }); // 'done', 'duplicate' or 'no-key'
 */
class GuardedCall {
  private readonly slots: HandlerSlots;
  private failuresInARow = 0;
  private down = false;

  public constructor(private readonly options: GuardedCallOptions) {
    this.slots = new HandlerSlots(options.concurrency, options.leaveLine);
  }

  /** The store failed STORE_FAILURES_TO_STOP times in a row: final for the invocation, as an open breaker. */
  public get storeDown(): boolean {
    return this.down;
  }

  /**
   * The handler's call at most once per idempotency key. Only the call holds a handler slot and runs
   * against its deadline; the store's claim before it and its completion after it do not (a store
   * call is bounded by the store's own request timeout). A pause or a stop that came while the call
   * waited for its slot keeps it from starting: it throws HandlerNotStartedError, and the guard releases the key.
   */
  public run(message: BoomerangMessage, span: AttemptSpan, traced: boolean, slot: SlotHold): Promise<IdempotencyOutcome> {
    const { guard, pause, deadlines } = this.options;
    return guard.run(
      message,
      async () => {
        if (!(await this.slots.enter())) throw new HandlerNotStartedError();
        slot.held = true;
        if (this.options.stopped() || (pause.holds() && !(await pause.waitOut(this.options.stopAt, this.options.leaveLine))))
          throw new HandlerNotStartedError();
        const window = deadlines.current();
        const call = (): Promise<void> | void => deadlines.bound(this.options.handler(message, window.context), window);
        await (traced ? span.run(call) : call());
        // Done: the slot is free before the store marks the key completed. A throw keeps it (the lifecycle frees it).
        this.free(slot);
      },
      this.options.hardStopAt - Date.now(),
    );
  }

  /** Frees the slot an attempt holds, if it holds one. */
  public free(slot: SlotHold): void {
    if (!slot.held) return;
    slot.held = false;
    this.slots.leave();
  }

  /** The store answered (the call ran, or was a duplicate): the streak of failures ends. */
  public answered(): void {
    this.failuresInARow = 0;
  }

  /** The guard refused to run a call (key held elsewhere, store down): logged and counted toward the store being down. */
  public refused(delivery: Delivery, origin: Origin, retryNo: number, refusal: GuardRefusal, thrown: unknown): void {
    const { log } = this.options;
    const fields = { messageId: delivery.properties.messageId, queue: origin.queue, retryNo, ...refusalFields(thrown) };
    log.warn(
      refusal === 'in-progress' ? "idempotency: another run holds the message's key; deferred" : 'idempotency: the store failed; message deferred',
      fields,
    );
    // A key held elsewhere was read from the store: it answers.
    this.failuresInARow = refusal === 'store-down' ? this.failuresInARow + 1 : 0;
    if (this.failuresInARow >= STORE_FAILURES_TO_STOP && !this.down) {
      this.down = true;
      this.options.onStoreDown();
      log.warn('idempotency: the store failed for several messages in a row; no more messages are tried in this invocation', {
        failuresInARow: this.failuresInARow,
        ...refusalFields(thrown),
      });
    }
  }
}

export { GuardedCall };
export type { SlotHold };
