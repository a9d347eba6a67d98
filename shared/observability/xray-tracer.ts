import { Tracer } from '@aws-lambda-powertools/tracer';
import AWSXRay from 'aws-xray-sdk-core';
import type { AttemptEnd, AttemptSpan, AttemptStart, AttemptTracer, TracedVerdict } from './attempt-tracer.js';
import { noTracer } from './attempt-tracer.js';
import type { Logger } from './logger.js';
import { xrayParentOf } from './trace-headers.js';

/** Boomerang's metadata namespace on a segment. */
const NAMESPACE = 'boomerang';

/** Characters X-Ray refuses in a segment's name (it takes letters, digits, spaces and `_.:/%&#=+\-@`). */
const NAME_REFUSED = /[^\p{L}\p{N}\s_.:/%&#=+\-@]/gu;

/**
 * Segments through Powertools Tracer and the X-Ray SDK it wraps, one per attempt.
 *
 * What X-Ray can and cannot do here: inside Lambda the function's own segment is a facade that
 * Lambda owns, in the trace of the invocation (`_X_AMZN_TRACE_ID`); it cannot be changed, and every
 * subsegment Powertools makes (`captureMethod`, `getSegment().addNewSubsegment`) belongs to it. A
 * subsegment per attempt would therefore put each attempt in the trace of the invocation that ran it,
 * and a message retried three times would show in three traces. So each attempt is a segment of its
 * own (`new Segment(name, traceId, parentId)` of the X-Ray SDK, public API), in the message's trace:
 * the trace id and parent of its `X-Amzn-Trace-Id`/`AWSTraceHeader` header, else of its W3C
 * `traceparent` (`1-<first 8>-<last 24>` of its trace id, which X-Ray accepts as it is). It is sent,
 * when it closes, to the same X-Ray daemon (AWS_XRAY_DAEMON_ADDRESS) as the function's subsegments,
 * and carries the invocation's trace id as the annotation `invocation_trace_id`. A message without
 * trace context starts a trace of its own at each attempt; a producer that said not to sample is obeyed.
 *
 * While the handler runs the segment is the SDK's current one (in a context of its own), so the
 * subsegments Powertools and the X-Ray SDK make for the handler's AWS SDK and HTTP calls are its children.
 * @example const tracer = createXrayTracer({ log });
 */
function createXrayTracer(deps: { readonly log: Logger }): AttemptTracer {
  const tracer = new Tracer();
  if (!tracer.isTracingEnabled()) {
    deps.log.warn('tracing is xray, but X-Ray tracing is off here (outside Lambda, or POWERTOOLS_TRACE_ENABLED=false): no segments are sent');
    return noTracer;
  }
  return { start: (attempt) => new XraySpan(tracer, attempt) };
}

class XraySpan implements AttemptSpan {
  private readonly segment: AWSXRay.Segment;

  public constructor(
    private readonly tracer: Tracer,
    attempt: AttemptStart,
  ) {
    const parent = xrayParentOf(attempt.headers);
    const segment = new AWSXRay.Segment(`${attempt.queue} process`.replace(NAME_REFUSED, '_').slice(0, 200), parent?.traceId, parent?.parentId);
    // A segment that is not traced is never sent (the SDK's own flag).
    if (parent?.sampled === false) segment.notTraced = true;
    segment.addAnnotation('messaging_system', 'rabbitmq');
    segment.addAnnotation('queue', attempt.queue);
    segment.addAnnotation('retry_no', attempt.retryNo);
    if (attempt.messageId !== undefined) segment.addAnnotation('message_id', attempt.messageId);
    const invocation = tracer.getRootXrayTraceId();
    if (invocation !== undefined) segment.addAnnotation('invocation_trace_id', invocation);
    segment.addMetadata('routing_key', attempt.routingKey, NAMESPACE);
    segment.addMetadata('body_bytes', attempt.bodyBytes, NAMESPACE);
    this.segment = segment;
  }

  public run<T>(fn: () => T): T {
    return this.tracer.provider.getNamespace().runAndReturn(() => {
      this.tracer.setSegment(this.segment);
      return fn();
    });
  }

  public handlerError(error: unknown): void {
    this.segment.addError(error instanceof Error ? error : String(error));
  }

  public verdict(verdict: TracedVerdict, handlerRan: boolean): void {
    const { segment } = this;
    segment.addAnnotation('verdict', verdict.kind);
    segment.addAnnotation('handler_ran', handlerRan);
    if (verdict.delayMs !== undefined) segment.addAnnotation('delay_ms', verdict.delayMs);
    if (verdict.why !== undefined)
      segment.addMetadata('why', typeof verdict.why === 'string' ? verdict.why : `${verdict.why.name}: ${verdict.why.message}`, NAMESPACE);
    if (verdict.reason !== undefined) segment.addMetadata('reason', verdict.reason, NAMESPACE);
    // A park that no handler error explains (a crash loop, an undecodable body) is still a failure of the message.
    if (verdict.kind === 'park' && !handlerRan) segment.addErrorFlag();
  }

  public end(end: AttemptEnd): void {
    const { segment } = this;
    if (end.outcome !== undefined) segment.addAnnotation('outcome', end.outcome);
    if (end.failure !== undefined) {
      segment.addMetadata('settlement_failure', end.failure, NAMESPACE);
      segment.addError(`settlement failed: ${end.failure}`);
    }
    segment.close();
  }
}

export { createXrayTracer };
