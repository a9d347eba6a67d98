/**
 * The verdicts of a delivery that did not end in a success: a failed attempt retried or parked (as
 * `decideRetry` says), a message parked without an attempt, and a message deferred or given back
 * untried. Written once for the lifecycle (core/attempt.ts), which holds the state they read: why the
 * invocation stopped, and the queue's pause, which a decision may ask for.
 */
import type { Delivery } from '../message/copy-message.js';
import { readRetryNo } from '../message/headers.js';
import type { BoomerangMessage } from '../message/message.js';
import { backoffDelayMs } from '../retry/backoff.js';
import { decideRetry, type ErrorFacts, errorFacts, type RetryDecision } from '../retry/decide-retry.js';
import { errorFields } from '../retry/error-fields.js';
import type { LifecycleOptions } from './lifecycle-options.js';
import type { Pause } from './pause.js';
import { NOT_TRIED, OUT_OF_TIME, queuePaused, STORE_DOWN } from './recorded-failures.js';
import { OUT_OF_TIME_GIVE_BACK, type Verdict } from './verdict.js';

/** Why no more messages should go to the handler in this invocation (or, `paused`, for now), if any. */
type Stop = 'breaker-open' | 'idempotency-store-down' | 'paused';

const PAUSED_GIVE_BACK: Verdict = Object.freeze({ kind: 'give-back', why: 'paused' });

/**
 * The verdicts of one invocation's failures and untried messages.
 * @example
 * const verdicts = new FailureVerdicts(options, pause);
 * const verdict = verdicts.failed(delivery, message, thrown, thrown); // { kind: 'retry', … } or { kind: 'park', … }
 */
class FailureVerdicts {
  public constructor(
    private readonly options: Pick<LifecycleOptions, 'config' | 'settings' | 'metrics' | 'random'>,
    private readonly pause: Pause,
  ) {}

  /** A failed attempt: retry or park, as `decideRetry` says. `handlerError` is what the handler threw, for the stack. */
  public failed(delivery: Delivery, message: BoomerangMessage, thrown: unknown, handlerError: unknown): Verdict {
    return this.of(delivery, message, this.decide(delivery, message, thrown), errorFacts(thrown), handlerError);
  }

  public decide(delivery: Delivery, message: BoomerangMessage, thrown: unknown): RetryDecision {
    const { config, random } = this.options;
    return decideRetry({
      error: thrown,
      retryNo: message.retryNo,
      policy: config.policy,
      rules: config.rules,
      messageType: delivery.properties.type,
      routingKey: message.routingKey,
      random,
    });
  }

  /** The verdict of a failed attempt, once decided; pauses the queue when the decision says so. */
  public of(delivery: Delivery, message: BoomerangMessage, decision: RetryDecision, error: ErrorFacts, handlerError: unknown): Verdict {
    this.options.metrics.handlerError(error.name);
    const { retryNo } = message;
    if (decision.pauseMs !== undefined)
      this.pause.ask({
        untilMs: Date.now() + decision.pauseMs,
        queue: message.queue,
        errorName: error.name,
        messageId: delivery.properties.messageId as string | undefined,
      });
    if (decision.kind === 'retry' && this.copyable(delivery))
      return { kind: 'retry', retryNo, nextRetryNo: decision.retryNo, delayMs: decision.delayMs, error };
    const reason = decision.kind === 'park' ? decision.reason : `${this.tooLargeReason(delivery)}: parked instead of retried`;
    const fields = errorFields(handlerError);
    return this.park(
      delivery,
      retryNo,
      fields === undefined ? error : { ...error, fields },
      reason,
      handlerError instanceof Error ? handlerError.stack : undefined,
    );
  }

  public park(delivery: Delivery, retryNo: number, error: ErrorFacts, reason: string, stack: string | undefined): Verdict {
    return { kind: 'park', retryNo, reason, error, stack, copyable: this.copyable(delivery) };
  }

  /**
   * The verdict of a delivery no handler will see now: the invocation has no time left for it
   * (`outOfTime`), or it stopped (`stop`, or undefined: not tried for now).
   */
  public untried(delivery: Delivery, stop: Stop | undefined, outOfTime: boolean): Verdict {
    if (outOfTime) {
      // Where a give-back raises `x-delivery-count`, it would count toward the crash-loop limit although
      // no handler saw the message: it waits the shortest delay instead, its count and its own `x-delivery-count` kept out of it.
      if (!this.options.settings.giveBackCounts) return OUT_OF_TIME_GIVE_BACK;
      const verdict = this.deferred(delivery, OUT_OF_TIME, 0);
      return verdict.kind === 'defer' ? verdict : OUT_OF_TIME_GIVE_BACK;
    }
    const { givesBackAsIs, defersByCopy } = this.options.settings;
    // Paused past the stop: back to its queue, where the next invocations leave it until the pause
    // ends; where a give-back would copy or count, it waits out the pause's remaining time on the delay path.
    if (stop === 'paused')
      return this.pause.counted(givesBackAsIs ? PAUSED_GIVE_BACK : this.deferred(delivery, queuePaused(this.pause.until), this.pause.remainingMs()));
    // The breaker opened or the store is down: back to its queue as it was where that counts nothing
    // and a deferral would copy it (pull on 4.3+); the next invocation probes with it.
    if (givesBackAsIs && defersByCopy && stop !== undefined) return { kind: 'give-back', why: stop };
    return this.deferred(delivery, stop === 'idempotency-store-down' ? STORE_DOWN : NOT_TRIED);
  }

  /** To the delay path with the count it came with, after `delayMs` (by default its next backoff delay). */
  public deferred(delivery: Delivery, why: ErrorFacts, delayMs?: number): Verdict {
    const { settings, config, random } = this.options;
    if (!settings.canDefer) return { kind: 'give-back', why: 'no-delay-path' };
    if (!this.copyable(delivery)) return { kind: 'give-back', why: 'too-large' };
    const { retryNo } = readRetryNo(delivery.properties.headers, config.retryHeader);
    return { kind: 'defer', retryNo, delayMs: delayMs ?? backoffDelayMs(retryNo + 1, config.policy, random), why };
  }

  private copyable(delivery: Delivery): boolean {
    const limit = this.options.settings.copyLimitBytes;
    return limit === undefined || delivery.content.length <= limit;
  }

  private tooLargeReason(delivery: Delivery): string {
    return `too large to copy: the body is ${delivery.content.length} bytes, over MAX_MESSAGE_BYTES (${this.options.settings.copyLimitBytes})`;
  }
}

export { FailureVerdicts };
export type { Stop };
