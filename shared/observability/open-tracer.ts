import type { Tracing } from '../config/option-table.js';
import { type AttemptTracer, noTracer } from './attempt-tracer.js';
import type { Logger } from './logger.js';

/**
 * The container's tracer for `tracing`. Each implementation is loaded here, with `import()`, only when
 * asked for: tracing off loads neither the OpenTelemetry API nor Powertools Tracer and the X-Ray SDK
 * (the Lambda bundles keep them in chunks of their own, fetched at the first invocation that traces).
 * @example const tracer = await openTracer(config.tracing, log);
 */
async function openTracer(tracing: Tracing, log: Logger): Promise<AttemptTracer> {
  try {
    return await load(tracing, log);
  } catch (error) {
    // Traces are for seeing: a tracer that cannot load never stops the messages.
    log.error('tracing could not start; messages are handled without spans', { tracing, reason: (error as Error).message });
    return noTracer;
  }
}

async function load(tracing: Tracing, log: Logger): Promise<AttemptTracer> {
  switch (tracing) {
    case 'off':
      return noTracer;
    case 'opentelemetry': {
      const { createOpenTelemetryTracer } = await import('./otel-tracer.js');
      return createOpenTelemetryTracer();
    }
    case 'xray': {
      const { createXrayTracer } = await import('./xray-tracer.js');
      return createXrayTracer({ log });
    }
  }
}

export { openTracer };
