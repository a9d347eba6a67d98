import type { Outcome } from './summary.js';

/**
 * The tracing port: one span per attempt of a message (its handler run, then its settlement),
 * carrying the message's trace context. The lifecycle (core/attempt.ts) starts it and tells it the
 * verdict; the mode's settlement, reported through the tally, ends it. `noTracer` (tracing off)
 * hands out one frozen span that does nothing: no allocation and no work per message.
 * Implementations: otel-tracer.ts (the OpenTelemetry API) and xray-tracer.ts (Powertools Tracer),
 * each loaded with `import()` only when `tracing` asks for it.
 */

/** What a span is started with: read from the delivery before anything else happens to it. */
type AttemptStart = {
  /** The delivery's AMQP headers: `traceparent`/`tracestate` (or `X-Amzn-Trace-Id`) give the parent. */
  readonly headers: Readonly<Record<string, unknown>> | undefined;
  /** The work queue the message was taken from. */
  readonly queue: string;
  /** The routing key it was delivered with. */
  readonly routingKey: string;
  readonly messageId: string | undefined;
  /** The count the message came with. */
  readonly retryNo: number;
  readonly bodyBytes: number;
};

/**
 * What the lifecycle concluded, as the span records it: `core/verdict.ts`'s `Verdict` fits as it is
 * (this layer may not import core), so nothing is copied per message.
 */
type TracedVerdict = {
  readonly kind: 'ack' | 'duplicate' | 'retry' | 'park' | 'defer' | 'give-back';
  /** A retry's or a deferral's wait on the delay path. */
  readonly delayMs?: number;
  /** Why a message is parked. */
  readonly reason?: string;
  /** Why an untried message waits: a recorded failure (defer) or a give-back's reason. */
  readonly why?: string | { readonly name: string; readonly message: string };
};

/**
 * How the mode settled it: the summary's outcome, and `failure` when the settlement went wrong (a copy
 * not confirmed, so the message went back; the invocation ended first): the span then ends as an error.
 */
type AttemptEnd = { readonly outcome: Outcome; readonly failure?: string } | { readonly outcome?: undefined; readonly failure: string };

/** One attempt's span. Every method may be called on the no-op span: it does nothing. */
interface AttemptSpan {
  /** Runs the handler with this span as the active context, so that the handler's own spans are its children. */
  run<T>(fn: () => T): T;
  /** The handler threw this (an exception event, the error status). */
  handlerError(error: unknown): void;
  /** The verdict; `handlerRan` is false for a message that never reached the handler (crash loop, deferred, given back). */
  verdict(verdict: TracedVerdict, handlerRan: boolean): void;
  /** The settlement was carried out, or failed; ends the span. Called once. */
  end(end: AttemptEnd): void;
}

/** Starts attempt spans; one per container, shared by its invocations. */
interface AttemptTracer {
  start(attempt: AttemptStart): AttemptSpan;
  /**
   * Sends the spans still buffered: the wrapper calls it at the end of each invocation, before Lambda
   * may freeze the process. @default nothing to send
   */
  flush?(): Promise<void>;
}

const NO_SPAN: AttemptSpan = Object.freeze({
  run: <T>(fn: () => T): T => fn(),
  handlerError: () => undefined,
  verdict: () => undefined,
  end: () => undefined,
});

/** Tracing off: every attempt gets the same frozen span, which does nothing. */
const noTracer: AttemptTracer = Object.freeze({ start: () => NO_SPAN });

export { NO_SPAN, noTracer };
export type { AttemptEnd, AttemptSpan, AttemptStart, AttemptTracer, TracedVerdict };
