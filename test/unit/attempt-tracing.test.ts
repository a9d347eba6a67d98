import type { MessageProperties } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { Lifecycle } from '../../shared/core/attempt.js';
import type { ModeSettings } from '../../shared/core/mode-settings.js';
import { Tally } from '../../shared/core/tally.js';
import { RetryableError, UnrecoverableError } from '../../shared/errors.js';
import type { Delivery } from '../../shared/message/copy-message.js';
import type { Handler } from '../../shared/message/message.js';
import type { AttemptEnd, AttemptSpan, AttemptStart, AttemptTracer, TracedVerdict } from '../../shared/observability/attempt-tracer.js';
import { noTracer } from '../../shared/observability/attempt-tracer.js';
import { silentLogger } from '../helpers/fakes.js';
import { noMetrics } from '../../shared/observability/metrics.js';

const CONFIG = loadConfig({
  WORK_QUEUE: 'orders',
  MAX_RETRIES: '3',
  BACKOFF_INITIAL_MS: '1000',
  BACKOFF_JITTER: '0',
  BREAKER_THRESHOLD: '1',
  CONCURRENCY: '4',
});
/** Native's settings: a deferral delays the message where it is, so what the breaker leaves untried is deferred. */
const PULL: ModeSettings = { copyLimitBytes: undefined, canDefer: true, giveBackCounts: false, givesBackAsIs: true, defersByCopy: false };
const ORIGIN = { queue: 'orders' };
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** What one fake span was told, in order. */
type Recorded = {
  readonly start: AttemptStart;
  readonly events: Array<
    | { readonly kind: 'run'; readonly active: boolean }
    | { readonly kind: 'handlerError'; readonly error: unknown }
    | { readonly kind: 'verdict'; readonly verdict: TracedVerdict; readonly handlerRan: boolean }
    | { readonly kind: 'end'; readonly end: AttemptEnd }
  >;
};

/** A tracer that records every call (hand-written, no network); `inside` is true only while a span's `run` runs. */
class FakeTracer implements AttemptTracer {
  public readonly spans: Recorded[] = [];
  public inside: Recorded | undefined;

  public start(attempt: AttemptStart): AttemptSpan {
    const recorded: Recorded = { start: attempt, events: [] };
    this.spans.push(recorded);
    return {
      run: <T>(fn: () => T): T => {
        this.inside = recorded;
        try {
          return fn();
        } finally {
          this.inside = undefined;
        }
      },
      handlerError: (error) => recorded.events.push({ kind: 'handlerError', error }),
      verdict: (verdict, handlerRan) => recorded.events.push({ kind: 'verdict', verdict, handlerRan }),
      end: (end) => recorded.events.push({ kind: 'end', end }),
    };
  }
}

function delivery(headers: Record<string, unknown> = {}): Delivery {
  return {
    content: Buffer.from('{"n":1}'),
    fields: { exchange: '', routingKey: 'orders' },
    properties: { headers, messageId: 'm-1' } as unknown as MessageProperties,
  };
}

function setUp(handler: Handler, tracer: AttemptTracer = new FakeTracer()) {
  const tally = new Tally(tracer);
  const now = Date.now();
  const lifecycle = new Lifecycle({
    config: CONFIG,
    handler,
    settings: PULL,
    log: silentLogger,
    metrics: noMetrics,
    random: () => 0.5,
    tally,
    stopAt: now + 5000,
    hardStopAt: now + 6000,
  });
  return { tally, lifecycle };
}

const partnerDown = new RetryableError('HTTP 503');

describe('Lifecycle: one span per attempt', () => {
  it.each([
    { name: 'ack', handler: (() => undefined) as Handler, headers: {}, verdict: { kind: 'ack' }, outcome: 'acked' as const, error: false },
    {
      name: 'retry, with its delay',
      handler: (() => {
        throw partnerDown;
      }) as Handler,
      headers: { 'x-retry-no': 1 },
      verdict: { kind: 'retry', delayMs: 2000 },
      outcome: 'retried' as const,
      error: true,
    },
    {
      name: 'park',
      handler: (() => {
        throw new UnrecoverableError('bad');
      }) as Handler,
      headers: {},
      verdict: { kind: 'park', reason: 'unrecoverable error UnrecoverableError' },
      outcome: 'parked' as const,
      error: true,
    },
  ])('$name: starts with the message, records the verdict, ends at the settlement', async ({ handler, headers, verdict, outcome, error }) => {
    // Prepare
    const tracer = new FakeTracer();
    const { tally, lifecycle } = setUp(handler, tracer);
    const message = delivery({ traceparent: TRACEPARENT, ...headers });
    // Act
    await lifecycle.attempt(message, ORIGIN);
    const endedBeforeSettlement = tracer.spans[0]!.events.some((e) => e.kind === 'end');
    tally.settle(outcome, message);
    // Assess
    expect(tracer.spans).toHaveLength(1);
    const [span] = tracer.spans;
    expect(span!.start).toEqual({
      headers: message.properties.headers,
      queue: 'orders',
      routingKey: 'orders',
      messageId: 'm-1',
      retryNo: (headers as { 'x-retry-no'?: number })['x-retry-no'] ?? 0,
      bodyBytes: 7,
    });
    expect(endedBeforeSettlement).toBe(false);
    expect(span!.events.map((e) => e.kind)).toEqual([...(error ? ['handlerError'] : []), 'verdict', 'end']);
    expect(span!.events).toContainEqual({ kind: 'verdict', verdict: expect.objectContaining(verdict), handlerRan: true });
    expect(span!.events.at(-1)).toEqual({ kind: 'end', end: { outcome, failure: undefined } });
  });

  it('records what the handler threw', async () => {
    // Prepare
    const tracer = new FakeTracer();
    const { lifecycle } = setUp(() => {
      throw partnerDown;
    }, tracer);
    // Act
    await lifecycle.attempt(delivery(), ORIGIN);
    // Assess
    expect(tracer.spans[0]!.events[0]).toEqual({ kind: 'handlerError', error: partnerDown });
  });

  it("runs the handler inside its span, so that the handler's own spans are its children", async () => {
    // Prepare
    const tracer = new FakeTracer();
    let seen: Recorded | undefined;
    const { lifecycle } = setUp(() => {
      seen = tracer.inside;
    }, tracer);
    // Act
    await lifecycle.attempt(delivery(), ORIGIN);
    // Assess
    expect(seen).toBe(tracer.spans[0]);
  });

  it('defer: an untried message gets a span that says the handler did not run, and why it waits', async () => {
    // Prepare: a threshold of 1, so the first failure opens the breaker
    const tracer = new FakeTracer();
    const { tally, lifecycle } = setUp(() => {
      throw partnerDown;
    }, tracer);
    await lifecycle.attempt(delivery(), ORIGIN);
    const untried = delivery({ 'x-retry-no': 2 });
    // Act
    const verdict = lifecycle.untried(untried, ORIGIN);
    tally.settle('deferred', untried);
    // Assess
    expect(verdict).toMatchObject({ kind: 'defer', delayMs: 4000 });
    const span = tracer.spans[1]!;
    expect(span.start).toMatchObject({ retryNo: 2 });
    expect(span.events).toEqual([
      {
        kind: 'verdict',
        verdict: expect.objectContaining({ kind: 'defer', delayMs: 4000, why: expect.objectContaining({ name: 'CircuitBreakerOpen' }) }),
        handlerRan: false,
      },
      { kind: 'end', end: { outcome: 'deferred', failure: undefined } },
    ]);
  });

  it('a handler still running at the hard stop: its span gets the cut-off verdict, and its late outcome changes nothing', async () => {
    // Prepare
    const tracer = new FakeTracer();
    let finish: () => void = () => undefined;
    const { lifecycle } = setUp(
      () =>
        new Promise<void>((resolve) => {
          finish = resolve;
        }),
      tracer,
    );
    const late = lifecycle.attempt(delivery(), ORIGIN);
    // Act
    const [[, verdict] = []] = lifecycle.cutOffRunning();
    finish();
    await late;
    // Assess
    expect(verdict).toMatchObject({ kind: 'retry' });
    expect(tracer.spans[0]!.events).toEqual([
      {
        kind: 'verdict',
        verdict: expect.objectContaining({ kind: 'retry', error: expect.objectContaining({ name: 'HandlerCutOffError' }) }),
        handlerRan: true,
      },
    ]);
  });

  it('a crash-loop park: a span whose handler did not run', async () => {
    // Prepare
    const tracer = new FakeTracer();
    const { lifecycle } = setUp(() => {
      throw new Error('never called');
    }, tracer);
    // Act
    await lifecycle.attempt(delivery({ 'x-delivery-count': 10 }), ORIGIN);
    // Assess
    expect(tracer.spans[0]!.events).toEqual([
      { kind: 'verdict', verdict: expect.objectContaining({ kind: 'park', reason: 'crash loop: delivered 11 times' }), handlerRan: false },
    ]);
  });

  it('a failed settlement ends the span with why; the end of the invocation ends the spans still open', async () => {
    // Prepare
    const tracer = new FakeTracer();
    const { tally, lifecycle } = setUp(() => undefined, tracer);
    const [given, unconfirmed, never] = [delivery(), delivery(), delivery()];
    for (const message of [given, unconfirmed, never]) await lifecycle.attempt(message, ORIGIN);
    // Act
    tally.settle('requeued', given, 'copy not confirmed (nacked): given back to the work queue');
    tally.unsettled(unconfirmed, 'copy not confirmed (timeout): the whole batch comes back');
    tally.settle('acked', unconfirmed);
    tally.stop('budget');
    tally.finish(Date.now());
    // Assess
    const ends = tracer.spans.map((span) => span.events.filter((e) => e.kind === 'end'));
    expect(ends).toEqual([
      [{ kind: 'end', end: { outcome: 'requeued', failure: 'copy not confirmed (nacked): given back to the work queue' } }],
      [{ kind: 'end', end: { failure: 'copy not confirmed (timeout): the whole batch comes back' } }],
      [{ kind: 'end', end: { failure: 'not settled: the invocation ended (budget)' } }],
    ]);
  });

  it('a tracer that throws traces nothing and stops nothing', async () => {
    // Prepare
    const { tally, lifecycle } = setUp(() => undefined, {
      start: () => {
        throw new Error('tracer broken');
      },
    });
    const message = delivery();
    // Act
    const verdict = await lifecycle.attempt(message, ORIGIN);
    tally.settle('acked', message);
    // Assess
    expect(verdict).toMatchObject({ kind: 'ack' });
    expect(tally.current.acked).toBe(1);
  });

  it('tracing off: the no-op tracer is never asked for a span', async () => {
    // Prepare
    const { tally, lifecycle } = setUp(() => undefined, noTracer);
    const message = delivery();
    // Act
    const verdict = await lifecycle.attempt(message, ORIGIN);
    tally.settle('acked', message);
    // Assess
    expect(verdict).toMatchObject({ kind: 'ack' });
    expect(tally.spans.on).toBe(false);
  });
});
