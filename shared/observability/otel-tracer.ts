import {
  type Attributes,
  type Context,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
  type TracerProvider,
} from '@opentelemetry/api';
import type { AttemptEnd, AttemptSpan, AttemptStart, AttemptTracer, TracedVerdict } from './attempt-tracer.js';
import { headerText } from './trace-headers.js';

/** The instrumentation scope the spans are made under. */
const SCOPE = 'boomerang-rabbitmq';

/** Reads the propagator's fields (`traceparent`, `tracestate`, `baggage`...) from AMQP headers, strings or bytes. */
const AMQP_HEADERS: TextMapGetter<Readonly<Record<string, unknown>>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => headerText(carrier[key]),
};

/**
 * Spans through the OpenTelemetry API: the team registers its tracer provider and propagator (an SDK,
 * the ADOT layer); until it does the API's global ones are no-ops, and so are these spans. Each
 * attempt is a CONSUMER span named `<work queue> process`, child of the context the global propagator
 * reads from the message's headers (W3C `traceparent`/`tracestate` by default), so that every attempt
 * of a message, across retries and invocations, is in the producer's trace under the producer's span.
 * A message that carries none is a child of the active context (the invocation's span, if any). The
 * invocation's own span, when there is one and it is not the parent, is a link.
 * @example const tracer = createOpenTelemetryTracer(); const span = tracer.start({ headers, queue: 'orders', ... });
 */
function createOpenTelemetryTracer(): AttemptTracer {
  // A proxy: it follows a provider registered later too.
  const tracer = trace.getTracer(SCOPE);
  return {
    start(attempt: AttemptStart): AttemptSpan {
      const active = context.active();
      const extracted = attempt.headers === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, attempt.headers, AMQP_HEADERS);
      const fromMessage = trace.getSpanContext(extracted);
      const parent = fromMessage === undefined ? active : extracted;
      const invocation = fromMessage === undefined ? undefined : trace.getSpanContext(active);
      const links: Link[] | undefined = invocation === undefined ? undefined : [{ context: invocation }];
      const span = tracer.startSpan(`${attempt.queue} process`, { kind: SpanKind.CONSUMER, attributes: startAttributes(attempt), links }, parent);
      return new OpenTelemetrySpan(span, trace.setSpan(parent, span));
    },
    flush: () => forceFlush(trace.getTracerProvider()),
  };
}

/**
 * Flushes the registered provider when it can (an SDK's does; the API's no-op cannot): the global is a
 * proxy, whose delegate is the team's provider. Duck-typed, since the team's copy of the API may be
 * another one than this bundle's.
 */
async function forceFlush(provider: TracerProvider): Promise<void> {
  const { getDelegate } = provider as { getDelegate?: () => TracerProvider };
  const delegate = (typeof getDelegate === 'function' ? getDelegate.call(provider) : provider) as { forceFlush?: () => Promise<void> };
  if (typeof delegate.forceFlush === 'function') await delegate.forceFlush();
}

/** The messaging semantic conventions' attributes of a RabbitMQ consumer, and the count the message came with. */
function startAttributes(attempt: AttemptStart): Attributes {
  const attributes: Attributes = {
    'messaging.system': 'rabbitmq',
    'messaging.operation': 'process',
    'messaging.operation.type': 'process',
    'messaging.destination.name': attempt.queue,
    'messaging.rabbitmq.destination.routing_key': attempt.routingKey,
    'messaging.message.body.size': attempt.bodyBytes,
    'boomerang.retry_no': attempt.retryNo,
  };
  if (attempt.messageId !== undefined) attributes['messaging.message.id'] = attempt.messageId;
  return attributes;
}

class OpenTelemetrySpan implements AttemptSpan {
  public constructor(
    private readonly span: Span,
    /** The parent's context with this span in it: active while the handler runs. */
    private readonly inside: Context,
  ) {}

  public run<T>(fn: () => T): T {
    return context.with(this.inside, fn);
  }

  public handlerError(error: unknown): void {
    this.span.recordException(error instanceof Error ? error : String(error));
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  }

  public verdict(verdict: TracedVerdict, handlerRan: boolean): void {
    const { span } = this;
    span.setAttribute('boomerang.verdict', verdict.kind);
    span.setAttribute('boomerang.handler_ran', handlerRan);
    if (verdict.delayMs !== undefined) span.setAttribute('boomerang.delay_ms', verdict.delayMs);
    if (verdict.why !== undefined)
      span.setAttribute('boomerang.why', typeof verdict.why === 'string' ? verdict.why : `${verdict.why.name}: ${verdict.why.message}`);
    // A park ends the message's retries: an error, whether or not the handler ran (a crash loop, an undecodable body).
    if (verdict.reason !== undefined) {
      span.setAttribute('boomerang.reason', verdict.reason);
      if (verdict.kind === 'park') span.setStatus({ code: SpanStatusCode.ERROR, message: `parked: ${verdict.reason}` });
    }
  }

  public end(end: AttemptEnd): void {
    const { span } = this;
    if (end.outcome !== undefined) span.setAttribute('boomerang.outcome', end.outcome);
    if (end.failure !== undefined) {
      span.setAttribute('boomerang.settlement_failure', end.failure);
      span.setStatus({ code: SpanStatusCode.ERROR, message: `settlement failed: ${end.failure}` });
    }
    span.end();
  }
}

export { createOpenTelemetryTracer };
