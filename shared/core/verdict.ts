import type { ErrorFacts } from '../retry/decide-retry.js';

/**
 * What the lifecycle of one message (core/attempt.ts) concluded; each mode only carries it out.
 *
 * | kind        | the handler  | pull settles by                    | event settles by                 |
 * |-------------|--------------|------------------------------------|----------------------------------|
 * | `ack`       | succeeded    | ack                                | nothing (the batch is acked)     |
 * | `duplicate` | not called   | ack                                | nothing                          |
 * | `retry`     | failed       | copy to the delay path, then ack   | copy to the delay path           |
 * | `park`      | failed, or never called (crash loop, undecodable) | copy to the parking lot, then ack; `copyable: false`: reject, the broker dead-letters it | copy to the parking lot |
 * | `defer`     | not called   | copy to the delay path, same count, then ack | the same copy          |
 * | `give-back` | not called   | nack with requeue                  | a copy to the tail of its queue  |
 */
type Verdict =
  | { readonly kind: 'ack' /** Idempotency on, and the message had no key: it ran unguarded. */; readonly unkeyed: boolean }
  | { readonly kind: 'duplicate' }
  | {
      readonly kind: 'retry';
      /** The count the message came with. */
      readonly retryNo: number;
      /** The count its copy carries. */
      readonly nextRetryNo: number;
      readonly delayMs: number;
      readonly error: ErrorFacts;
    }
  | {
      readonly kind: 'park';
      readonly retryNo: number;
      readonly reason: string;
      readonly error: ErrorFacts;
      /** Kept for the parked copy only: formatting a stack costs about 30 µs. */
      readonly stack: string | undefined;
      /**
       * False when the body is over the mode's copy limit (`MAX_MESSAGE_BYTES`): no copy can carry it,
       * so the broker must move it (the work queue dead-letters to the parking lot).
       */
      readonly copyable: boolean;
    }
  | {
      readonly kind: 'defer';
      /** Untried: it comes back with the count it came with. */
      readonly retryNo: number;
      readonly delayMs: number;
      /** Why it was not tried, as its copy records it. */
      readonly why: ErrorFacts;
    }
  | { readonly kind: 'give-back'; readonly why: GiveBackReason };

/**
 * Why an untried message goes back as it is: the invocation ran out of time for it, a pause outlasts
 * the invocation, the breaker opened or the idempotency store is down (where a give-back counts
 * nothing and a deferral would be a copy), there is no delay path to defer it to (MAX_RETRIES=0
 * without retrying rules), or no copy can carry its body.
 */
type GiveBackReason = 'out-of-time' | 'paused' | 'breaker-open' | 'idempotency-store-down' | 'no-delay-path' | 'too-large';

/** A park verdict: what the too-large path (pull/park-uncopyable.ts) carries out. */
type ParkVerdict = Extract<Verdict, { kind: 'park' }>;

const ACK: Verdict = Object.freeze({ kind: 'ack', unkeyed: false });
/** An untried message back to its queue as it is because there was no time for it (or it arrived after the take loop stopped). */
const OUT_OF_TIME_GIVE_BACK: Verdict = Object.freeze({ kind: 'give-back', why: 'out-of-time' });
const ACK_UNKEYED: Verdict = Object.freeze({ kind: 'ack', unkeyed: true });
const DUPLICATE: Verdict = Object.freeze({ kind: 'duplicate' });

export { ACK, ACK_UNKEYED, DUPLICATE, OUT_OF_TIME_GIVE_BACK };
export type { ParkVerdict, Verdict };
