import type { Delivery } from '../message/copy-message.js';
import { type AttemptSpan, type AttemptTracer, NO_SPAN, noTracer } from '../observability/attempt-tracer.js';
import type { Outcome } from '../observability/summary.js';
import type { Verdict } from './verdict.js';
import { LiveList } from '../live-list.js';

/** A span started and not yet ended. */
type OpenSpan = { index: number; readonly span: AttemptSpan };

/**
 * The spans of one invocation's attempts, from the lifecycle's start to the mode's settlement. The
 * tally owns it: every mode already reports each settlement there, once, so the span of a delivery
 * ends where it is counted. With tracing off nothing is kept and every call returns at once.
 */
class AttemptSpans {
  /** False with the no-op tracer: the lifecycle and the tally then skip every span call they can. */
  public readonly on: boolean;
  /**
   * The open spans, found by their delivery, and listed for `endAll`. Not a `Map`: one churned a span
   * per message would fall into V8's chain of rehashed tables (shared/live-list.ts); a WeakMap's table
   * keeps no link to the one that replaced it.
   */
  private byDelivery = new WeakMap<Delivery, OpenSpan>();
  private readonly open = new LiveList<OpenSpan>();

  public constructor(private readonly tracer: AttemptTracer = noTracer) {
    this.on = tracer !== noTracer;
  }

  /** The span of this attempt of `delivery`, kept until its settlement. A tracer that throws traces nothing: the message goes on. */
  public start(delivery: Delivery, queue: string, retryNo: number): AttemptSpan {
    if (!this.on) return NO_SPAN;
    let span: AttemptSpan;
    try {
      span = this.tracer.start({
        headers: delivery.properties.headers,
        queue,
        routingKey: delivery.fields.routingKey,
        messageId: delivery.properties.messageId,
        retryNo,
        bodyBytes: delivery.content.length,
      });
    } catch {
      return NO_SPAN;
    }
    const record: OpenSpan = { index: -1, span };
    this.byDelivery.set(delivery, record);
    this.open.add(record);
    return span;
  }

  /** The open span of `delivery`'s attempt, else the no-op one. */
  public of(delivery: Delivery): AttemptSpan {
    return this.byDelivery.get(delivery)?.span ?? NO_SPAN;
  }

  /** The mode carried out the delivery's verdict (`failure`: it could not, and says why): ends its span. */
  public settled(delivery: Delivery, outcome: Outcome | undefined, failure?: string): void {
    const record = this.byDelivery.get(delivery);
    if (record === undefined) return;
    this.byDelivery.delete(delivery);
    this.open.remove(record);
    endQuietly(record.span, outcome, failure);
  }

  /** Ends the spans still open (the invocation ended before their settlement), as errors saying why. */
  public endAll(failure: string): void {
    this.byDelivery = new WeakMap();
    for (const record of this.open.drain()) endQuietly(record.span, undefined, failure);
  }
}

function endQuietly(span: AttemptSpan, outcome: Outcome | undefined, failure: string | undefined): void {
  try {
    span.end(outcome === undefined ? { failure: failure ?? 'not settled' } : { outcome, failure });
  } catch {
    // A tracer's failure to end a span never fails a settlement.
  }
}

/** Tells the span the verdict, with whether the handler ran (false: a crash loop, an undecodable body, deferred, refused, a duplicate), and returns it. */
function recorded(span: AttemptSpan, handlerRan: boolean, verdict: Verdict): Verdict {
  span.verdict(verdict, handlerRan);
  return verdict;
}

export { AttemptSpans, recorded };
