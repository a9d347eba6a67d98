import { describe, expect, it } from 'vitest';
import { createEventFunction } from '../../shared/event/event-function.js';
import type { Config } from '../../shared/config/config.js';
import { EventBatchError } from '../../shared/core/invocation-errors.js';
import { runEvent } from '../../shared/event/run-event.js';
import { UnrecoverableError } from '../../shared/errors.js';
import { BoomerangHeader } from '../../shared/message/headers.js';
import type { Handler } from '../../shared/message/message.js';
import type { Summary } from '../../shared/observability/summary.js';
import { tierQueueName } from '../../shared/topology/tiers.js';
import { uniqueName } from '../helpers/broker.js';
import { setUpTopology, testConfig } from '../helpers/engine.js';
import { recordingLogger, silentLogger } from '../helpers/fakes.js';
import { useTestBroker } from '../helpers/topology.js';
import { eventFor, fixtureMessages, rmqMessage } from '../fixtures/events.js';

const testBroker = useTestBroker();

/** Fails with what the body names: `retry` (retryable), `park` (unrecoverable); anything else succeeds. */
const byBody: Handler = (message) => {
  const body = message.body.toString();
  if (body === 'retry') throw new Error('partner down');
  if (body === 'park') throw new UnrecoverableError('partner said 400');
};

/** A config whose PARKING_QUEUE is not the default, so that the mapping to it shows. */
function eventConfig(env: Record<string, string> = {}): Config {
  const workQueue = uniqueName('work');
  return testConfig({ WORK_QUEUE: workQueue, PARKING_QUEUE: `${workQueue}.parking`, FUNCTION_NAME: 'boomerang-event', ...env });
}

function invoke(config: Config, event: unknown, handler: Handler = byBody, budgetMs = 5000): Promise<Summary> {
  return runEvent({ config, handler, event, budgetMs, log: silentLogger });
}

describe('runEvent on the broker', () => {
  it("retries and parks per queue of a multi-queue event: W's own delay path, PARKING_QUEUE for WORK_QUEUE, W.parked for another", async () => {
    // Prepare
    const broker = testBroker();
    const config = eventConfig();
    const other = testConfig({ WORK_QUEUE: uniqueName('other') });
    await setUpTopology(broker, config);
    await setUpTopology(broker, other);
    const event = eventFor({
      [config.workQueue]: [rmqMessage('ok'), rmqMessage('retry', { messageId: 'w-retry' }), rmqMessage('park', { messageId: 'w-park' })],
      [other.workQueue]: [rmqMessage('retry', { messageId: 'o-retry' }), rmqMessage('park', { messageId: 'o-park' })],
    });
    // Act
    const summary = await invoke(config, event);
    // Assess
    expect(summary).toMatchObject({ received: 5, acked: 1, retried: 2, parked: 2, requeued: 0, stoppedBecause: 'idle' });
    const [workPark] = await broker.drain(config.parkingQueue, 1);
    const [otherPark] = await broker.drain(`${other.workQueue}.parked`, 1);
    expect(workPark?.properties.messageId).toBe('w-park');
    expect(otherPark?.properties.headers).toMatchObject({ [BoomerangHeader.sourceQueue]: other.workQueue, [BoomerangHeader.functionName]: 'boomerang-event' });
    // The retry copies wait 200 ms on their own queue's delay path, then are back on that queue.
    const [workBack] = await broker.drain(config.workQueue, 1);
    const [otherBack] = await broker.drain(other.workQueue, 1);
    expect([workBack?.properties.messageId, workBack?.properties.headers?.['x-retry-no']]).toEqual(['w-retry', 1]);
    expect([otherBack?.properties.messageId, otherBack?.properties.headers?.['x-retry-no']]).toEqual(['o-retry', 1]);
  });

  it('counts on from an x-retry-no that arrived as bytes, and keeps string headers as strings', async () => {
    // Prepare
    const broker = testBroker();
    const config = eventConfig();
    await setUpTopology(broker, config);
    const event = eventFor({ [config.workQueue]: fixtureMessages('byte-headers') });
    // Act
    const summary = await invoke(config, event, () => {
      throw new Error('partner down');
    });
    // Assess
    expect(summary).toMatchObject({ retried: 1 });
    const [copy] = await broker.drain(tierQueueName(config.workQueue, 800), 1, 2000);
    expect(copy?.properties.headers).toMatchObject({
      'x-retry-no': 3,
      tenant: 'acme',
      city: 'Zürich',
      [BoomerangHeader.firstFailureAt]: '2026-11-22T10:00:00.000Z',
    });
    expect(copy?.properties).toMatchObject({ messageId: 'order-42', contentType: 'application/json', timestamp: Date.UTC(2026, 10, 22, 10, 15, 30) / 1000 });
  });

  it('parks every undecodable message with its reason and handles the rest', async () => {
    // Prepare
    const broker = testBroker();
    const config = eventConfig();
    await setUpTopology(broker, config);
    const seen: string[] = [];
    // Act
    const summary = await invoke(config, eventFor({ [config.workQueue]: fixtureMessages('malformed') }), (m) => void seen.push(String(m.properties.messageId)));
    // Assess
    expect(summary).toMatchObject({ received: 4, acked: 1, parked: 3 });
    expect(seen).toEqual(['odd-fields']);
    const parked = await broker.drain(config.parkingQueue, 3);
    expect(parked.map((m) => [m.properties.messageId, m.content.toString()])).toEqual([
      ['bad-base64', 'not base64 at all!'],
      ['no-data', ''],
      [undefined, '"a record that is a string"'],
    ]);
    expect(parked.map((m) => m.properties.headers?.[BoomerangHeader.parkReason])).toEqual([
      'undecodable event message: data (the body) is not valid base64; the parked body is the text as received',
      'undecodable event message: data (the body) is null, not a base64 string',
      'undecodable event message: the record is not an object (a string)',
    ]);
  });

  it('throws EventBatchError, with the summary, when a queue has no delay path: the whole batch comes back', async () => {
    // Prepare
    const broker = testBroker();
    const config = eventConfig();
    await setUpTopology(broker, config);
    const unknown = uniqueName('no-topology');
    // The invocation reads its pause marker, which declares `<unknown>.pause`.
    broker.trackQueue(unknown);
    const event = eventFor({ [config.workQueue]: [rmqMessage('ok')], [unknown]: [rmqMessage('retry')] });
    // Act
    const error = await invoke(config, event).catch((e: unknown) => e);
    // Assess
    expect(error).toBeInstanceOf(EventBatchError);
    expect((error as EventBatchError).message).toMatch(/unroutable.*the event source will deliver the whole batch of 2 again/);
    expect((error as EventBatchError).summary).toMatchObject({ received: 2, acked: 1, retried: 0, stoppedBecause: 'publish-failed' });
  });

  it("refuses an event from another vhost than the connection's", async () => {
    // Prepare
    const config = eventConfig();
    const event = eventFor({ [config.workQueue]: [rmqMessage('ok')] }, 'elsewhere');
    // Act & Assess
    await expect(invoke(config, event)).rejects.toThrow('The event comes from vhost "elsewhere"');
  });

  it.each([
    [
      'an aws:sqs event',
      (byQueue: object) => ({ ...eventFor(byQueue as Record<string, unknown[]>), eventSource: 'aws:sqs' }),
      'eventSource is "aws:sqs", not "aws:rmq"',
    ],
    [
      'an event with no eventSource',
      (byQueue: object) => ({ rmqMessagesByQueue: eventFor(byQueue as Record<string, unknown[]>).rmqMessagesByQueue }),
      'it has no eventSource',
    ],
    ['a key without ::vhost', (byQueue: object) => ({ ...eventFor({}), rmqMessagesByQueue: byQueue }), 'names no vhost'],
  ])('fails the invocation on %s with EventShapeError, before any handler runs or any copy is made', async (_case, shape, problem) => {
    // Prepare: messages that would be retried and parked, were the event read
    const broker = testBroker();
    const config = eventConfig();
    await setUpTopology(broker, config);
    let calls = 0;
    const event = shape({ [config.workQueue]: [rmqMessage('retry', { messageId: 'r' }), rmqMessage('park', { messageId: 'p' })] });
    // Act
    const error = await invoke(config, event, (m) => {
      calls++;
      return byBody(m, undefined as never);
    }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    // Assess
    expect(error?.name).toBe('EventShapeError');
    expect(error?.message).toContain(problem);
    expect(calls).toBe(0);
    expect([await broker.messageCount(config.parkingQueue), await broker.messageCount(tierQueueName(config.workQueue, 200))]).toEqual([0, 0]);
  });

  it('counts the attempt the budget cut off (a retry copy), and sends the untried message back to the tail of its queue, count unchanged', async () => {
    // Prepare: one 30 s tier, so the retry copy still waits there when the test looks.
    const broker = testBroker();
    const config = eventConfig({
      SAFETY_MARGIN_MS: '200',
      BACKOFF_INITIAL_MS: '30000',
      BACKOFF_MAX_MS: '30000',
      CONCURRENCY: '1',
      ATTEMPT_TIMEOUT_MS: '900000',
    });
    await setUpTopology(broker, config);
    const waitForAbort: Handler = (_m, { signal }) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('cut off'))));
    const event = eventFor({ [config.workQueue]: [rmqMessage('slow', { messageId: 'slow' }), rmqMessage('untried', { messageId: 'untried' })] });
    // Act
    const summary = await invoke(config, event, waitForAbort, 400);
    // Assess
    expect(summary).toMatchObject({ received: 2, retried: 1, requeued: 1, stoppedBecause: 'budget' });
    const retried = await broker.drain(tierQueueName(config.workQueue, 30_000), 1);
    expect(retried.map((m) => [m.properties.messageId, m.properties.headers?.['x-retry-no']])).toEqual([['slow', 1]]);
    const back = await broker.drain(config.workQueue, 1);
    expect(back.map((m) => [m.properties.messageId, m.properties.headers?.['x-retry-no']])).toEqual([['untried', 0]]);
  });
});

describe('createEventFunction', () => {
  it('logs one JSON summary line with the request id', async () => {
    // Prepare
    const broker = testBroker();
    const config = eventConfig();
    await setUpTopology(broker, config);
    const logger = recordingLogger('info');
    const invokeFunction = createEventFunction(byBody, { config, log: logger.log });
    // Act
    const summary = await invokeFunction(eventFor({ [config.workQueue]: [rmqMessage('ok')] }), { awsRequestId: 'req-1', getRemainingTimeInMillis: () => 5000 });
    // Assess
    expect(summary.acked).toBe(1);
    expect(logger.entries()).toMatchObject([
      { level: 'info', message: 'invocation summary', requestId: 'req-1', service: 'boomerang-event', summary: { acked: 1 } },
    ]);
  });
});

describe('the event function: one lifecycle with pull', () => {
  it('runs at most BREAKER_THRESHOLD handlers of a 100-message batch with the partner down, and defers the rest untried', async () => {
    // Prepare
    const broker = testBroker();
    const config = eventConfig({ BREAKER_THRESHOLD: '5', CONCURRENCY: '8', BACKOFF_INITIAL_MS: '3200' });
    await setUpTopology(broker, config);
    let calls = 0;
    const down: Handler = () => {
      calls++;
      throw new Error('partner 503');
    };
    const messages = Array.from({ length: 100 }, (_, i) => rmqMessage('x', { messageId: `m-${i}` }));
    // Act
    const summary = await invoke(config, eventFor({ [config.workQueue]: messages }), down);
    // Assess: the breaker starts half-open, so the failures come one at a time and none is running when it opens
    expect(calls).toBe(5);
    expect(summary).toMatchObject({ received: 100, retried: 5, deferred: 95, parked: 0, requeued: 0, breakerOpened: true, stoppedBecause: 'breaker-open' });
    const waiting = await broker.drain(tierQueueName(config.workQueue, 3200), 100);
    const counts = new Map<unknown, number>();
    for (const m of waiting) counts.set(m.properties.headers?.['x-retry-no'], (counts.get(m.properties.headers?.['x-retry-no']) ?? 0) + 1);
    // Deferred copies keep the count they came with (0); the five tried carry 1.
    expect(Object.fromEntries(counts)).toEqual({ 0: 95, 1: 5 });
  });

  it('checks the delay path before the first handler: with a delay queue missing, no handler runs and the batch fails with TopologyDriftError', async () => {
    // Prepare: topology applied for BACKOFF_MAX_MS=3200, the function then deployed with 6400 (one more tier)
    const broker = testBroker();
    const applied = eventConfig();
    await setUpTopology(broker, applied);
    const config = testConfig({ WORK_QUEUE: applied.workQueue, PARKING_QUEUE: applied.parkingQueue, BACKOFF_MAX_MS: '6400' });
    let calls = 0;
    const invokeFunction = createEventFunction(
      () => {
        calls++;
      },
      { config, log: silentLogger },
    );
    const event = eventFor({ [config.workQueue]: [rmqMessage('ok'), rmqMessage('ok')] });
    // Act
    const error = await invokeFunction(event, { awsRequestId: 'req-drift', getRemainingTimeInMillis: () => 5000 }).then(
      () => undefined,
      (e: unknown) => e as Error & { missing?: string[]; summary?: Summary },
    );
    // Assess
    expect(calls).toBe(0);
    expect(error?.name).toBe('TopologyDriftError');
    expect(error?.missing).toEqual([`queue ${tierQueueName(config.workQueue, 6400)}`]);
    expect(error?.summary).toMatchObject({ received: 2, acked: 0, stoppedBecause: 'topology-drift' });
  });

  it('refuses a native queue before it connects or calls a handler: the event source cannot settle a message with a delay', async () => {
    // Prepare: nothing on the broker; a connection would not even be tried.
    const config = testConfig({ WORK_QUEUE: uniqueName('native-event'), DELAY_MODE: 'native', AMQP_URL: 'amqp://guest:guest@127.0.0.1:1' });
    let calls = 0;
    const invokeFunction = createEventFunction(
      () => {
        calls++;
      },
      { config, log: silentLogger },
    );
    const event = eventFor({ [config.workQueue]: [rmqMessage('ok')] });
    // Act
    const error = await invokeFunction(event, { awsRequestId: 'req-native', getRemainingTimeInMillis: () => 5000 }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    // Assess
    expect(calls).toBe(0);
    expect(error?.name).toBe('ConfigError');
    expect(error?.message).toContain("delayMode 'native' is served by the pull function only");
  });

  it('copies a message over MAX_MESSAGE_BYTES whole: event mode does not use the limit (the broker took this very body)', async () => {
    // Prepare
    const broker = testBroker();
    const config = eventConfig({ MAX_MESSAGE_BYTES: '1000', BACKOFF_INITIAL_MS: '3200' });
    await setUpTopology(broker, config);
    const big = Buffer.alloc(2000, 5);
    const message = rmqMessage(big, { messageId: 'big' });
    // Act
    const summary = await invoke(config, eventFor({ [config.workQueue]: [message, rmqMessage('ok')] }), (m) => {
      if (m.body.length > 1000) throw new Error('partner 413');
    });
    // Assess
    expect(summary).toMatchObject({ received: 2, acked: 1, retried: 1 });
    const [copy] = await broker.drain(tierQueueName(config.workQueue, 3200), 1);
    expect(copy?.content.equals(big)).toBe(true);
  });
});
