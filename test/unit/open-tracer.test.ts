import { describe, expect, it } from 'vitest';
import { noTracer } from '../../shared/observability/attempt-tracer.js';
import { openTracer } from '../../shared/observability/open-tracer.js';
import { recordingLogger } from '../helpers/fakes.js';

describe('openTracer', () => {
  it('off: the no-op tracer, nothing loaded', async () => {
    expect(await openTracer('off', recordingLogger().log)).toBe(noTracer);
  });

  it('opentelemetry: a tracer over the API, whose spans are no-ops until a provider is registered', async () => {
    // Act
    const tracer = await openTracer('opentelemetry', recordingLogger().log);
    const span = tracer.start({ headers: {}, queue: 'orders', routingKey: 'orders', messageId: 'm-1', retryNo: 0, bodyBytes: 1 });
    // Assess
    expect(tracer).not.toBe(noTracer);
    expect(span.run(() => 42)).toBe(42);
    expect(() => span.end({ outcome: 'acked' })).not.toThrow();
  });

  it('xray outside Lambda: Powertools says tracing is off, so no segments, and a warning says why', async () => {
    // Prepare
    const logger = recordingLogger('warn');
    // Act
    const tracer = await openTracer('xray', logger.log);
    // Assess
    expect(process.env.AWS_EXECUTION_ENV).toBeUndefined();
    expect(tracer).toBe(noTracer);
    expect(logger.entries()).toContainEqual(expect.objectContaining({ level: 'warn', message: expect.stringContaining('X-Ray tracing is off here') }));
  });
});
