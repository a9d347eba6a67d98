/**
 * What a native settlement writes on a message, and the one pure function that turns a verdict into
 * the AMQP 1.0 outcome the broker carries out. RabbitMQ 4.3 keeps the `x-opt-…` message annotations
 * a `modified` outcome gives, on the message itself: later deliveries carry them, and a 0-9-1 reader
 * (the parking-lot tools) sees them as headers of the same names. Nothing else of the message changes.
 */
import type { Verdict } from '../core/verdict.js';
import { cutUtf8, type Delivery, isoTime } from '../message/copy-message.js';
import { withFailure } from '../message/failure-history.js';
import { BoomerangHeader, readBrokerCount } from '../message/headers.js';
import type { Amqp10Outcome } from './settlement-writer.js';

/** Only `x-opt-` annotations are kept by the broker; Boomerang's own carry the names its copies use. */
const NativeAnnotation = {
  /** The broker holds the message until this time (epoch ms), then hands it out again. */
  deliveryTime: 'x-opt-delivery-time',
  /** The retry count: what the handler sees as `retryNo`. */
  retryNo: 'x-opt-boomerang-retry-no',
  /**
   * How many of the message's returns Boomerang made itself (its retries, each a failed settlement
   * that raises `x-delivery-count`): the rest of `x-delivery-count` are crashes.
   */
  failedSettlements: 'x-opt-boomerang-failed-settlements',
  firstFailureAt: `x-opt-${BoomerangHeader.firstFailureAt}`,
  lastFailureAt: `x-opt-${BoomerangHeader.lastFailureAt}`,
  errorName: `x-opt-${BoomerangHeader.errorName}`,
  errorMessage: `x-opt-${BoomerangHeader.errorMessage}`,
  errorStack: `x-opt-${BoomerangHeader.errorStack}`,
  errorFields: `x-opt-${BoomerangHeader.errorFields}`,
  failureHistory: `x-opt-${BoomerangHeader.failureHistory}`,
  attempts: `x-opt-${BoomerangHeader.attempts}`,
  parkReason: `x-opt-${BoomerangHeader.parkReason}`,
  parkedAt: `x-opt-${BoomerangHeader.parkedAt}`,
  functionName: `x-opt-${BoomerangHeader.functionName}`,
} as const;

/** A stack is cut to this many bytes, as on a parked copy. */
const ERROR_STACK_MAX_BYTES = 4096;
/** An error message is cut to this many bytes: it travels with every retry. */
const ERROR_MESSAGE_MAX_BYTES = 1024;

const ACCEPTED: Amqp10Outcome = Object.freeze({ kind: 'accepted' });
const RELEASED: Amqp10Outcome = Object.freeze({ kind: 'released' });

type Amqp10OutcomeContext = {
  readonly now: number;
  readonly functionName: string;
};

/**
 * The outcome that carries out `verdict` for `delivery` on a native queue.
 *
 * | verdict     | outcome                                             | annotations written                               |
 * |-------------|-----------------------------------------------------|---------------------------------------------------|
 * | `ack`, `duplicate` | `accepted`                                   | none                                              |
 * | `give-back` | `released` (4.3 does not count it)                  | none                                              |
 * | `retry`     | `modified`, failed, delivery time = now + delay     | retry count + 1, failed settlements + 1, error, failure times |
 * | `defer`     | `modified`, not failed (`x-delivery-count` stays), delivery time = now + delay | none           |
 * | `park`      | `modified`, undeliverable here: dead-lettered       | error, stack, reason, attempts, failure times, time, function |
 * @example amqp10Outcome({ kind: 'ack', unkeyed: false }, delivery, context) // { kind: 'accepted' }
 */
function amqp10Outcome(verdict: Verdict, delivery: Delivery, context: Amqp10OutcomeContext): Amqp10Outcome {
  switch (verdict.kind) {
    case 'ack':
    case 'duplicate':
      return ACCEPTED;
    case 'give-back':
      return RELEASED;
    case 'retry': {
      const at = isoTime(new Date(context.now));
      // One object, written once: this runs for every retry.
      return {
        kind: 'modified',
        deliveryFailed: true,
        undeliverableHere: false,
        annotations: {
          [NativeAnnotation.deliveryTime]: context.now + verdict.delayMs,
          [NativeAnnotation.retryNo]: verdict.nextRetryNo,
          [NativeAnnotation.failedSettlements]: ownReturns(delivery) + 1,
          [NativeAnnotation.errorName]: verdict.error.name,
          [NativeAnnotation.errorMessage]: cutUtf8(verdict.error.message, ERROR_MESSAGE_MAX_BYTES),
          [NativeAnnotation.firstFailureAt]: stringAnnotation(delivery, NativeAnnotation.firstFailureAt) ?? at,
          [NativeAnnotation.lastFailureAt]: at,
          [NativeAnnotation.failureHistory]: historyWith(delivery, at, verdict.error),
        },
      };
    }
    case 'defer':
      // Untried, so not a failed delivery: the broker delays it all the same (measured on 4.3.6) and
      // leaves x-delivery-count alone, so a deferral never counts toward the crash loop or the delivery limit.
      return {
        kind: 'modified',
        deliveryFailed: false,
        undeliverableHere: false,
        annotations: { [NativeAnnotation.deliveryTime]: context.now + verdict.delayMs },
      };
    case 'park': {
      const at = isoTime(new Date(context.now));
      // The failure times as a parked copy records them: the park is the last failure (the first is the first retry's).
      const annotations: Record<string, unknown> = {
        [NativeAnnotation.firstFailureAt]: stringAnnotation(delivery, NativeAnnotation.firstFailureAt) ?? at,
        [NativeAnnotation.lastFailureAt]: at,
        [NativeAnnotation.failureHistory]: historyWith(delivery, at, verdict.error),
        [NativeAnnotation.errorName]: verdict.error.name,
        [NativeAnnotation.errorMessage]: cutUtf8(verdict.error.message, ERROR_MESSAGE_MAX_BYTES),
        [NativeAnnotation.parkReason]: verdict.reason,
        [NativeAnnotation.attempts]: verdict.retryNo + 1,
        [NativeAnnotation.parkedAt]: at,
        [NativeAnnotation.functionName]: context.functionName,
      };
      if (verdict.stack !== undefined) annotations[NativeAnnotation.errorStack] = cutUtf8(verdict.stack, ERROR_STACK_MAX_BYTES);
      if (verdict.error.fields !== undefined) annotations[NativeAnnotation.errorFields] = verdict.error.fields;
      return { kind: 'modified', deliveryFailed: true, undeliverableHere: true, annotations };
    }
  }
}

/** The message's failure history (its annotation) with this failure at its end. */
function historyWith(delivery: Delivery, at: string, error: { readonly name: string; readonly message: string }): string {
  return withFailure(delivery.properties.headers?.[NativeAnnotation.failureHistory], { at, name: error.name, message: error.message });
}

/** The failed settlements Boomerang made on this message so far (0 when it never made one). */
function ownReturns(delivery: Delivery): number {
  return readBrokerCount(delivery.properties.headers, NativeAnnotation.failedSettlements) ?? 0;
}

function stringAnnotation(delivery: Delivery, name: string): string | undefined {
  const value = delivery.properties.headers?.[name];
  return typeof value === 'string' ? value : undefined;
}

export { NativeAnnotation, amqp10Outcome };
