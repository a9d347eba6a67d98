import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPullFunction } from '../../shared/pull/pull-function.js';
import type { Config } from '../../shared/config/config.js';
import { UnrecoverableError } from '../../shared/errors.js';
import type { BoomerangMessage, Handler } from '../../shared/message/message.js';
import { EmfMetrics, type EmfDocument } from '../helpers/emf-metrics.js';
import type { Summary } from '../../shared/observability/summary.js';
import { sleep, TestBroker } from '../helpers/broker.js';
import { publishJson, setUpTopology, testConfig } from '../helpers/engine.js';
import { recordingLogger } from '../helpers/fakes.js';

const TRACE = {
  traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  tracestate: 'vendor=opaque-value,other=1',
  'x-tenant': 'acme',
};

/** The pull function as the cloud runs it, with its logs and EMF lines kept for the test. */
function instrumentedPull(config: Config, handler: Handler) {
  const logger = recordingLogger('debug');
  const emf: EmfDocument[] = [];
  const invoke = createPullFunction(handler, {
    config,
    log: logger.log,
    metrics: (service) => new EmfMetrics({ service, write: (line) => emf.push(JSON.parse(line) as EmfDocument) }),
  });
  const once = (): Promise<Summary> => invoke({}, { awsRequestId: randomUUID(), getRemainingTimeInMillis: () => 4000 });
  return { once, logger, emf };
}

describe('logs, metrics and trace context on the broker', () => {
  let broker: TestBroker;

  beforeEach(async () => {
    broker = await TestBroker.open();
  });

  afterEach(async () => {
    await broker.close();
  });

  it('logs one summary line per invocation, one line per parked message, outcomes at debug, and writes EMF', async () => {
    // Prepare
    // Retries wait 5 s: none comes back within the invocation.
    const config = testConfig({ FUNCTION_NAME: 'orders-retry', MAX_RETRIES: '2', BACKOFF_INITIAL_MS: '5000', BACKOFF_MAX_MS: '5000' });
    await setUpTopology(broker, config);
    publishJson(broker, config.workQueue, { kind: 'ok' }, { messageId: 'ok-1' });
    publishJson(broker, config.workQueue, { kind: 'flaky' }, { messageId: 'flaky-1', headers: TRACE });
    publishJson(broker, config.workQueue, { kind: 'bad' }, { messageId: 'bad-1' });
    const handler: Handler = (m: BoomerangMessage) => {
      const { kind } = m.json<{ kind: string }>();
      if (kind === 'bad') throw new UnrecoverableError('no such order');
      if (kind === 'flaky' && m.retryNo === 0) throw Object.assign(new Error('partner 503'), { name: 'PartnerDown' });
    };
    const { once, logger, emf } = instrumentedPull(config, handler);

    // Act
    const summary = await once();

    // Assess: logs
    const entries = logger.entries();
    const summaries = entries.filter((e) => String(e.message).startsWith('invocation summary'));
    expect(summaries).toEqual([
      expect.objectContaining({ level: 'info', service: 'orders-retry', coldStart: true, summary: expect.objectContaining({ received: 3 }) }),
    ]);
    expect(entries.filter((e) => e.message === 'message parked')).toEqual([
      expect.objectContaining({ level: 'warn', messageId: 'bad-1', errorName: 'UnrecoverableError', reason: 'unrecoverable error UnrecoverableError' }),
    ]);
    expect(entries).toContainEqual(expect.objectContaining({ level: 'debug', message: 'message acked', messageId: 'ok-1' }));
    expect(entries).toContainEqual(
      expect.objectContaining({ level: 'debug', message: 'message retried', messageId: 'flaky-1', traceparent: TRACE.traceparent, waitMs: 5000 }),
    );

    // Assess: metrics
    // The parking lot's depth is read after the invocation settled: the one message it parked.
    expect(summary).toMatchObject({ received: 3, acked: 1, retried: 1, parked: 1, parkedDepth: 1 });
    const [main, ...byName] = emf;
    expect(main).toMatchObject({
      service: 'orders-retry',
      received: 3,
      acked: 1,
      retried: 1,
      parked: 1,
      requeued: 0,
      deferred: 0,
      handlerErrors: 2,
      retryDelayMs: [5000],
      parkedDepth: 1,
    });
    expect((main!._aws as { CloudWatchMetrics: { Namespace: string }[] }).CloudWatchMetrics[0]?.Namespace).toBe('Boomerang');
    expect(byName.map((d) => [d.errorName, d.handlerErrors])).toEqual(
      expect.arrayContaining([
        ['PartnerDown', 1],
        ['UnrecoverableError', 1],
      ]),
    );
  });

  it('carries traceparent, tracestate and user headers unchanged through a retry and into the parking lot', async () => {
    // Prepare
    const config = testConfig({ MAX_RETRIES: '1' });
    await setUpTopology(broker, config);
    publishJson(broker, config.workQueue, { n: 1 }, { messageId: 'traced', headers: TRACE });
    const seen: Record<string, unknown>[] = [];
    const handler: Handler = (m) => {
      seen.push({ ...m.headers });
      throw new Error('still failing');
    };
    const { once } = instrumentedPull(config, handler);

    // Act: the first attempt retries, the second parks
    for (let i = 0; i < 10 && seen.length < 2; i++) {
      await once();
      await sleep(100);
    }
    const [parked] = await broker.drain(config.parkingQueue, 1);

    // Assess
    expect(seen).toHaveLength(2);
    for (const headers of [...seen, parked?.properties.headers ?? {}]) expect(headers).toMatchObject(TRACE);
  });

  it('says in the summary line and in the metrics that the breaker opened', async () => {
    // Prepare
    const config = testConfig({ BREAKER_THRESHOLD: '2' });
    await setUpTopology(broker, config);
    for (let i = 0; i < 5; i++) publishJson(broker, config.workQueue, { i });
    await broker.holds(config.workQueue, 5);
    const { once, logger, emf } = instrumentedPull(config, () => {
      throw new Error('partner down');
    });
    // The three untried: deferred where a give-back counts (before 4.3), else given back as they were.
    const untried = broker.giveBackCounts ? { deferred: 3, requeued: 0 } : { deferred: 0, requeued: 3 };

    // Act
    await once();

    // Assess
    const entries = logger.entries();
    expect(entries).toContainEqual(expect.objectContaining({ level: 'warn', message: expect.stringContaining('circuit breaker opened'), failuresInARow: 2 }));
    expect(entries).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: 'invocation summary: the circuit breaker opened',
        summary: expect.objectContaining({ breakerOpened: true, stoppedBecause: 'breaker-open', ...untried }),
      }),
    );
    expect(entries.filter((e) => e.message === 'message deferred')).toHaveLength(untried.deferred);
    expect(emf[0]).toMatchObject({ breakerOpened: 1, retried: 2, ...untried });
  });
});
