import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import type { AttemptStart } from '../../shared/observability/attempt-tracer.js';
import { createOpenTelemetryTracer } from '../../shared/observability/otel-tracer.js';
import { producerTraceparent, registerInMemoryProvider } from '../helpers/otel.js';

const otel = registerInMemoryProvider();
const tracer = createOpenTelemetryTracer();

function attempt(headers: Record<string, unknown>, overrides: Partial<AttemptStart> = {}): AttemptStart {
  return { headers, queue: 'orders', routingKey: 'orders', messageId: 'm-1', retryNo: 1, bodyBytes: 7, ...overrides };
}

describe('createOpenTelemetryTracer', () => {
  it.each([
    ['a string', (text: string) => text],
    ['a Buffer (a byte array from another client)', (text: string) => Buffer.from(text)],
  ])("continues the message's trace from a traceparent given as %s", (_name, encode) => {
    // Prepare
    const producer = producerTraceparent();
    // Act
    const span = tracer.start(attempt({ traceparent: encode(producer.traceparent), tracestate: encode('vendor=1') }));
    span.verdict({ kind: 'retry', delayMs: 2000 }, true);
    span.end({ outcome: 'retried' });
    // Assess
    const [made] = otel.spansOf(producer.traceId).filter((s) => s.name === 'orders process');
    expect(made?.parentSpanContext?.spanId).toBe(producer.spanId);
    expect(made?.spanContext().traceState?.get('vendor')).toBe('1');
    expect(made?.kind).toBe(SpanKind.CONSUMER);
    expect(made?.attributes).toEqual({
      'messaging.system': 'rabbitmq',
      'messaging.operation': 'process',
      'messaging.operation.type': 'process',
      'messaging.destination.name': 'orders',
      'messaging.rabbitmq.destination.routing_key': 'orders',
      'messaging.message.body.size': 7,
      'messaging.message.id': 'm-1',
      'boomerang.retry_no': 1,
      'boomerang.verdict': 'retry',
      'boomerang.handler_ran': true,
      'boomerang.delay_ms': 2000,
      'boomerang.outcome': 'retried',
    });
  });

  it('records a handler error as an exception event and the error status', () => {
    // Prepare
    const producer = producerTraceparent();
    // Act
    const span = tracer.start(attempt({ traceparent: producer.traceparent }));
    span.handlerError(new TypeError('boom'));
    span.verdict({ kind: 'park', reason: 'unrecoverable error TypeError' }, true);
    span.end({ outcome: 'parked' });
    // Assess
    const [made] = otel.spansOf(producer.traceId).filter((s) => s.name === 'orders process');
    expect(made?.events.map((e) => [e.name, e.attributes?.['exception.type'], e.attributes?.['exception.message']])).toEqual([
      ['exception', 'TypeError', 'boom'],
    ]);
    expect(made?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'parked: unrecoverable error TypeError' });
    expect(made?.attributes['boomerang.reason']).toBe('unrecoverable error TypeError');
  });

  it('a failed settlement ends the span with the error status and why', () => {
    // Prepare
    const producer = producerTraceparent();
    // Act
    const span = tracer.start(attempt({ traceparent: producer.traceparent }));
    span.verdict({ kind: 'defer', delayMs: 4000, why: { name: 'CircuitBreakerOpen', message: 'open' } }, false);
    span.end({ outcome: 'requeued', failure: 'copy not confirmed (nacked)' });
    // Assess
    const [made] = otel.spansOf(producer.traceId).filter((s) => s.name === 'orders process');
    expect(made?.attributes).toMatchObject({
      'boomerang.handler_ran': false,
      'boomerang.why': 'CircuitBreakerOpen: open',
      'boomerang.outcome': 'requeued',
      'boomerang.settlement_failure': 'copy not confirmed (nacked)',
    });
    expect(made?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'settlement failed: copy not confirmed (nacked)' });
  });

  it("makes the attempt's span the active one while the handler runs", () => {
    // Prepare
    const producer = producerTraceparent();
    const span = tracer.start(attempt({ traceparent: producer.traceparent }));
    // Act
    const child = span.run(() => {
      const made = trace.getTracer('team').startSpan('partner call');
      made.end();
      return made.spanContext();
    });
    span.end({ outcome: 'acked' });
    // Assess
    const [attemptSpan] = otel.spansOf(producer.traceId).filter((s) => s.name === 'orders process');
    expect(child.traceId).toBe(producer.traceId);
    expect(otel.spansOf(producer.traceId).find((s) => s.name === 'partner call')?.parentSpanContext?.spanId).toBe(attemptSpan?.spanContext().spanId);
  });

  it('a message without trace context starts a trace of its own, linked to nothing', () => {
    // Act
    const span = tracer.start(attempt({ tenant: 'acme' }, { messageId: undefined }));
    span.end({ outcome: 'acked' });
    // Assess
    const made = otel.exporter.getFinishedSpans().at(-1);
    expect(made?.parentSpanContext).toBeUndefined();
    expect(made?.attributes['messaging.message.id']).toBeUndefined();
  });
});
