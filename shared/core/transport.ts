/**
 * What a mode is to the invocation (core/invocation.ts): a transport that takes messages and settles
 * verdicts, how it is opened, and the moments of the budget it is given. The modes: the AMQP 0-9-1 consumer
 * (pull/pull-transport.ts), the `aws:rmq` batch (event/run-event.ts) and the AMQP 1.0 receiver (native/native-transport.ts).
 */
import type { PauseMarker } from '../amqp/pause-marker.js';
import type { Delivery } from '../message/copy-message.js';
import type { StopReason, Summary } from '../observability/summary.js';
import type { Origin } from './lifecycle-options.js';
import type { ModeSettings } from './mode-settings.js';
import type { FailureReason, Tally } from './tally.js';
import type { Verdict } from './verdict.js';

/** The three moments of an invocation's budget, epoch ms. */
type Deadlines = {
  /** No message is taken, and no handler started, after it; the handlers' signal aborts. */
  readonly stopTakingAt: number;
  /** Handlers still running are cut off: their attempts count. */
  readonly hardStopAt: number;
  /** Work still unconfirmed is given up, leaving room to close. */
  readonly settleBy: number;
};

/** One message taken: the delivery the lifecycle reads, and where it came from. */
type Taken = { readonly delivery: Delivery; readonly origin: Origin };

/**
 * A mode, as the invocation sees it: a source of messages that settles verdicts its own way.
 * Each transport counts what it takes and settles into the tally it was opened with.
 */
interface Transport {
  /** What the lifecycle does differently on this transport (core/mode-settings.ts). */
  readonly settings: ModeSettings;
  /** Where the retry count travels, when not in `RETRY_HEADER` (native: an annotation). @default RETRY_HEADER */
  readonly retryHeader?: string;
  /** Taken past this, the loop stops (`max-messages`). Event: no limit, the batch is what it is. */
  readonly maxMessages: number;
  /**
   * True when a handler's turn (its place in the concurrency) lasts until its verdict is settled
   * (event: after an unconfirmed copy no handler starts, since the batch comes back whole anyway).
   */
  readonly settleHoldsTurn: boolean;
  /** Aborted, with the error, when nothing can be settled any more: the connection broke (event: or a copy failed). */
  readonly lost: AbortSignal;
  /** Taken and not settled yet: below BATCH_SIZE with nothing arriving, the queue is idle. */
  readonly outstanding: number;
  /** The next message, or undefined after `waitMs` with none. */
  take(waitMs: number): Promise<Taken | undefined>;
  /**
   * Takes at most `prefetch` unsettled messages more from now on; what it holds already is still
   * handed out (pull: a new consumer with that prefetch). Absent: the transport cannot (event, native).
   */
  narrow?(prefetch: number): void;
  /** Why nothing more can be taken although time is left (the consumer was cancelled, a copy failed, the batch is all taken), or undefined. */
  ended(): StopReason | undefined;
  /** What arrived and no handler saw, removed from the transport's buffer (event: the rest of the batch). */
  takeBuffered(): Taken[];
  /** Carries out a verdict through the transport's fallback chain; the work still under way (a copy awaiting its confirm), if any. */
  settle(taken: Taken, verdict: Verdict): Promise<void> | undefined;
  /** Ends the flow of messages (pull: cancel, native: drain); resolves with what arrived meanwhile, which goes back untouched. */
  stopTaking(): Promise<Taken[]>;
  /** After an end without failure: waits for what is still settling, gives back the rest and reads the parking lot's depth. */
  finish(deadlines: Deadlines): Promise<void>;
  /** Closes the connection; never throws. */
  close(): Promise<void>;
  /** How `failure` ends the invocation: the summary's reason, and the error thrown with the summary. */
  failed(failure: Error): Promise<{ readonly reason: FailureReason; readonly error: (summary: Summary) => Error }>;
  /** After an end without failure: an error to throw all the same (pull: a copy came back unroutable). @default none */
  completed?(summary: Summary): Error | undefined;
}

/**
 * What opening a transport found: a transport to take from, or nothing to do (the queue's marker
 * says it is paused, so nothing is taken; or an event batch is empty). `pausedUntil` with a
 * transport: a batch already taken whose queue is paused, each message deferred untried.
 */
type Opened =
  | { readonly transport: Transport; readonly pausedUntil?: number; readonly markerOf: (queue: string) => PauseMarker }
  | { readonly transport: undefined; readonly pausedUntil: number | undefined };

/** Opens a transport: connects, checks, reads the pause marker; on an error it closes what it opened and throws. */
type OpenTransport = (context: { readonly tally: Tally; readonly deadlines: Deadlines; readonly startedAt: number }) => Promise<Opened>;

/**
 * The moments of a budget. The safety margin is kept inside the budget even when a caller passes a
 * tiny budget: at most half of it.
 * @example invocationDeadlines(1000, 10_000, 0) // { stopTakingAt: 9000, hardStopAt: 9500, settleBy: 9750 }
 */
function invocationDeadlines(safetyMarginMs: number, budgetMs: number, startedAt: number): Deadlines {
  const marginMs = Math.min(safetyMarginMs, budgetMs / 2);
  return { stopTakingAt: startedAt + budgetMs - marginMs, hardStopAt: startedAt + budgetMs - marginMs / 2, settleBy: startedAt + budgetMs - marginMs / 4 };
}

export { invocationDeadlines };
export type { Deadlines, OpenTransport, Taken, Transport };
