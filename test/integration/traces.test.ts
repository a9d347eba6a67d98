import { SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../shared/config/config.js';
import { UnrecoverableError } from '../../shared/errors.js';
import { runEvent } from '../../shared/event/run-event.js';
import type { Handler } from '../../shared/message/message.js';
import { silentLogger } from '../helpers/fakes.js';
import type { Summary } from '../../shared/observability/summary.js';
import { createOpenTelemetryTracer } from '../../shared/observability/otel-tracer.js';
import { BROKER_VERSION, NATIVE_BROKER } from '../helpers/broker-version.js';
import { pullUntil, setUpTopology, testConfig, total } from '../helpers/engine.js';
import { producerTraceparent, registerInMemoryProvider } from '../helpers/otel.js';
import { rawPublish, sized } from '../helpers/raw-publish.js';
import { useTestBroker } from '../helpers/topology.js';
import { bytesOf, eventFor, rmqMessage } from '../fixtures/events.js';

const otel = registerInMemoryProvider();
const tracer = createOpenTelemetryTracer();
const testBroker = useTestBroker();

/** Fails the first attempt of each message, then succeeds. */
function failsOnce(): Handler {
  return (message) => {
    if (message.retryNo === 0) throw new Error('partner down');
  };
}

/** The attempt spans of one trace, in the order they started. */
function attemptSpans(traceId: string, config: Config): ReadableSpan[] {
  return otel
    .spansOf(traceId)
    .filter((span) => span.name === `${config.workQueue} process`)
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
}

/** A queue of its own, and a message on it in a producer's trace. */
async function publishTraced(env: Record<string, string>, messageId: string): Promise<{ config: Config; producer: ReturnType<typeof producerTraceparent> }> {
  const broker = testBroker();
  const config = testConfig(env);
  await setUpTopology(broker, config);
  const producer = producerTraceparent();
  broker.channel.sendToQueue(config.workQueue, Buffer.from('{"n":1}'), {
    persistent: true,
    messageId,
    headers: { traceparent: producer.traceparent, tracestate: 'vendor=1' },
  });
  return { config, producer };
}

/** A retry then an ack, both in the producer's trace under the producer's span; and a park. */
function pullModeCases(label: string, env: Record<string, string>): void {
  describe(`${label} on RabbitMQ ${BROKER_VERSION}`, () => {
    it('a message that fails once then succeeds: two spans in its trace, a retry with its delay, then an ack', async () => {
      // Prepare
      const { config, producer } = await publishTraced(env, 'traced-1');
      // Act
      const summaries = await pullUntil(config, failsOnce(), (so) => total(so).acked === 1, 15_000, tracer);
      // Assess
      expect(total(summaries)).toMatchObject({ retried: 1, acked: 1 });
      const spans = attemptSpans(producer.traceId, config);
      expect(spans.map((span) => span.parentSpanContext?.spanId)).toEqual([producer.spanId, producer.spanId]);
      expect(spans.map((span) => span.spanContext().traceState?.get('vendor'))).toEqual(['1', '1']);
      expect(spans[0]?.attributes).toMatchObject({
        'messaging.system': 'rabbitmq',
        'messaging.destination.name': config.workQueue,
        'messaging.message.id': 'traced-1',
        'boomerang.retry_no': 0,
        'boomerang.verdict': 'retry',
        'boomerang.delay_ms': 200,
        'boomerang.outcome': 'retried',
        'boomerang.handler_ran': true,
      });
      expect(spans[0]?.status.code).toBe(SpanStatusCode.ERROR);
      expect(spans[0]?.events.map((event) => event.name)).toEqual(['exception']);
      expect(spans[1]?.attributes).toMatchObject({ 'boomerang.retry_no': 1, 'boomerang.verdict': 'ack', 'boomerang.outcome': 'acked' });
      expect(spans[1]?.attributes['boomerang.delay_ms']).toBeUndefined();
      expect(spans[1]?.status.code).toBe(SpanStatusCode.UNSET);
    });

    it("a park: one span in the message's trace, parked with its reason", async () => {
      // Prepare
      const { config, producer } = await publishTraced(env, 'traced-park');
      // Act
      const summaries = await pullUntil(
        config,
        () => {
          throw new UnrecoverableError('bad order');
        },
        (so) => total(so).parked === 1,
        15_000,
        tracer,
      );
      // Assess
      expect(total(summaries)).toMatchObject({ parked: 1 });
      const spans = attemptSpans(producer.traceId, config);
      expect(spans).toHaveLength(1);
      expect(spans[0]?.parentSpanContext?.spanId).toBe(producer.spanId);
      expect(spans[0]?.attributes).toMatchObject({
        'boomerang.verdict': 'park',
        'boomerang.reason': 'unrecoverable error UnrecoverableError',
        'boomerang.outcome': 'parked',
      });
      expect(spans[0]?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'parked: unrecoverable error UnrecoverableError' });
    });
  });
}

pullModeCases('pull mode', {});

describe.runIf(NATIVE_BROKER)('native mode', () => {
  pullModeCases('native mode', { DELAY_MODE: 'native' });
});

describe(`a traceparent from another client, on RabbitMQ ${BROKER_VERSION}`, () => {
  it.each([
    ['a byte array', 'x'],
    ['a long string', 'S'],
  ])('continues the trace from a traceparent sent as %s', async (_name, tag) => {
    // Prepare
    const broker = testBroker();
    const config = testConfig();
    await setUpTopology(broker, config);
    const producer = producerTraceparent();
    await rawPublish({
      queue: config.workQueue,
      body: Buffer.from('{"n":1}'),
      messageId: `raw-${tag}`,
      headers: [['traceparent', tag, sized(Buffer.from(producer.traceparent))]],
    });
    // Act
    const summaries = await pullUntil(
      config,
      () => undefined,
      (so) => total(so).acked === 1,
      15_000,
      tracer,
    );
    // Assess
    expect(total(summaries)).toMatchObject({ acked: 1 });
    const spans = attemptSpans(producer.traceId, config);
    expect(spans.map((span) => [span.parentSpanContext?.spanId, span.attributes['messaging.message.id']])).toEqual([[producer.spanId, `raw-${tag}`]]);
  });
});

describe(`event mode on RabbitMQ ${BROKER_VERSION}`, () => {
  /** The record the event source would deliver for a message: headers as it writes them (strings as bytes). */
  function recordOf(body: string, messageId: string, headers: Record<string, unknown>) {
    return rmqMessage(body, { messageId, headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, typeof v === 'string' ? bytesOf(v) : v])) });
  }

  function invoke(config: Config, records: readonly unknown[], handler: Handler): Promise<Summary> {
    return runEvent({ config, handler, event: eventFor({ [config.workQueue]: records }), budgetMs: 5000, log: silentLogger, tracer });
  }

  it('a message that fails once then succeeds: two spans in its trace, a retry with its delay, then an ack', async () => {
    // Prepare
    const broker = testBroker();
    const config = testConfig();
    await setUpTopology(broker, config);
    const producer = producerTraceparent();
    // Act: the first invocation retries it; the copy comes back from the delay path, and the second acks it
    const first = await invoke(config, [recordOf('{"n":1}', 'event-1', { traceparent: producer.traceparent })], failsOnce());
    const [copy] = await broker.drain(config.workQueue, 1);
    const headers = copy?.properties.headers ?? {};
    const second = await invoke(
      config,
      [recordOf(copy!.content.toString(), 'event-1', { traceparent: String(headers.traceparent), 'x-retry-no': headers['x-retry-no'] })],
      failsOnce(),
    );
    // Assess
    expect([first.retried, second.acked]).toEqual([1, 1]);
    const spans = attemptSpans(producer.traceId, config);
    expect(spans.map((span) => span.parentSpanContext?.spanId)).toEqual([producer.spanId, producer.spanId]);
    expect(spans.map((span) => [span.attributes['boomerang.verdict'], span.attributes['boomerang.delay_ms'], span.attributes['boomerang.outcome']])).toEqual([
      ['retry', 200, 'retried'],
      ['ack', undefined, 'acked'],
    ]);
  });

  it("a park: one span in the message's trace, parked with its reason", async () => {
    // Prepare
    const broker = testBroker();
    const config = testConfig();
    await setUpTopology(broker, config);
    const producer = producerTraceparent();
    // Act
    const summary = await invoke(config, [recordOf('{"n":1}', 'event-park', { traceparent: producer.traceparent })], () => {
      throw new UnrecoverableError('bad order');
    });
    // Assess
    expect(summary.parked).toBe(1);
    const spans = attemptSpans(producer.traceId, config);
    expect(spans.map((span) => [span.parentSpanContext?.spanId, span.attributes['boomerang.verdict'], span.attributes['boomerang.outcome']])).toEqual([
      [producer.spanId, 'park', 'parked'],
    ]);
  });
});
