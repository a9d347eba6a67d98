import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';

/**
 * What a team that uses OpenTelemetry sets up, for a test file: a tracer provider registered as the
 * global one, with the W3C propagator and the AsyncLocalStorage context manager
 * (`NodeTracerProvider.register()`), exporting to memory. Once per file (vitest isolates files):
 * the API keeps its globals for the life of the process.
 */
function registerInMemoryProvider(): { readonly exporter: InMemorySpanExporter; spansOf(traceId: string): ReadableSpan[] } {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  return {
    exporter,
    spansOf: (traceId) => exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId),
  };
}

/** A producer's span context as a `traceparent`, for a message to carry. */
function producerTraceparent(): { readonly traceparent: string; readonly traceId: string; readonly spanId: string } {
  const span = trace.getTracer('test-producer').startSpan('orders publish');
  const { traceId, spanId } = span.spanContext();
  span.end();
  return { traceparent: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

export { producerTraceparent, registerInMemoryProvider };
