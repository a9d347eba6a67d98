import { describe, expect, it } from 'vitest';
import type { Handler } from '../../shared/message/message.js';
import { runPull } from '../../shared/pull/pull.js';
import { tierQueueName } from '../../shared/topology/tiers.js';
import { sleep, type TestBroker } from '../helpers/broker.js';
import { pullOnce, pullUntil, setUpTopology, testConfig, total } from '../helpers/engine.js';
import { recordingLogger, silentLogger } from '../helpers/fakes.js';
import { useTestBroker } from '../helpers/topology.js';

const testBroker = useTestBroker();

/** RabbitMQ 4.x's (and Amazon MQ's) default max_message_size, also MAX_MESSAGE_BYTES' default. */
const SIXTEEN_MIB = 16 * 1024 * 1024;

/**
 * 16 MiB take longer than the tests' usual 150 ms idle timeout to arrive (seen on 4.3.6): the
 * invocation would call the queue idle and give the message back untried.
 */
const IDLE_FOR_BIG = '3000';

/** A handler that fails every message on its first attempt and acks its retries; counts its calls. */
function failFirstAttempt(): { handler: Handler; calls: number[] } {
  const calls: number[] = [];
  return {
    calls,
    handler: (message) => {
      calls.push(message.retryNo);
      if (message.retryNo === 0) throw new Error('partner 503');
    },
  };
}

/** Publishes a 16 MiB body and waits until the queue holds it: an invocation started sooner would find the queue idle. */
async function publishSixteenMib(broker: TestBroker, queue: string, options: { messageId: string; headers?: Record<string, unknown> }): Promise<void> {
  broker.channel.sendToQueue(queue, Buffer.alloc(SIXTEEN_MIB, 1), { persistent: true, ...options });
  await broker.holds(queue, 1);
}

describe('messages near the broker size limit', () => {
  it('retries a 16 MiB message under the default limit: the broker counts the body, not the headers the copy adds', async () => {
    // Prepare
    const broker = testBroker();
    // The copy waits a minute: still in its delay queue when the test looks.
    const config = testConfig({ BACKOFF_INITIAL_MS: '60000', BACKOFF_MAX_MS: '60000', IDLE_TIMEOUT_MS: IDLE_FOR_BIG });
    await setUpTopology(broker, config);
    await publishSixteenMib(broker, config.workQueue, { messageId: 'big' });
    const { handler } = failFirstAttempt();
    // Act
    const summary = await pullOnce(config, handler, 20_000);
    // Assess
    expect(summary).toMatchObject({ received: 1, retried: 1, requeued: 0 });
    const [copy] = await broker.drain(tierQueueName(config.workQueue, 60_000), 1);
    expect(copy?.content.length).toBe(SIXTEEN_MIB);
  });

  it('warns, naming IDLE_TIMEOUT_MS, when a large message arrives just after the queue was called idle, and gives it back untouched', async () => {
    // Prepare: an idle window far shorter than 16 MiB takes to arrive
    const broker = testBroker();
    const config = testConfig({ IDLE_TIMEOUT_MS: '10' });
    await setUpTopology(broker, config);
    await publishSixteenMib(broker, config.workQueue, { messageId: 'big' });
    const { handler, calls } = failFirstAttempt();
    const logger = recordingLogger('warn');
    // Act
    const summary = await runPull({ config, handler, budgetMs: 10_000, log: logger.log });
    // Assess: never tried, back in the work queue, and the log says what to raise
    expect(summary).toMatchObject({ stoppedBecause: 'idle', received: 1, requeued: 1, retried: 0, parked: 0 });
    expect(calls).toEqual([]);
    expect(logger.entries()).toContainEqual(
      expect.objectContaining({ level: 'warn', message: expect.stringContaining('raise IDLE_TIMEOUT_MS'), largestBodyBytes: SIXTEEN_MIB, idleTimeoutMs: 10 }),
    );
    // The give-back reaches the queue's count a moment after the invocation returns
    await broker.holds(config.workQueue, 1);
    const [back] = await broker.drain(config.workQueue, 1);
    expect(back?.content.equals(Buffer.alloc(SIXTEEN_MIB, 1))).toBe(true);
    expect(back?.properties.messageId).toBe('big');
  });

  it("parks a failed message over MAX_MESSAGE_BYTES through the work queue's dead-lettering, byte for byte, and handles the 40 behind it in the same invocation", async () => {
    // Prepare: the work queue as topology apply creates it dead-letters to the parking lot
    const broker = testBroker();
    const config = testConfig({ MAX_MESSAGE_BYTES: '1000', CRASH_LOOP_LIMIT: '3' });
    await setUpTopology(broker, config);
    const big = Buffer.alloc(2000, 7);
    const odd = { tenant: 'acme', count: 5, nested: { deep: [1, 'two'] } };
    broker.channel.sendToQueue(config.workQueue, big, { persistent: true, messageId: 'too-big', headers: odd });
    for (let i = 0; i < 40; i++) broker.channel.sendToQueue(config.workQueue, Buffer.from(`{"n":${i}}`), { persistent: true, messageId: `good-${i}` });
    await broker.holds(config.workQueue, 41);
    const calls: string[] = [];
    const handler: Handler = (message) => {
      calls.push(String(message.properties.messageId));
      if (message.body.length > 1000) throw new Error('partner 413');
    };
    const logger = recordingLogger('warn');
    // Act
    const summary = await runPull({ config, handler, budgetMs: 10_000, log: logger.log });
    // Assess: one attempt at the partner, then parked by the broker, never copied; the 40 acked in the same invocation
    expect(summary).toMatchObject({ received: 41, acked: 40, parked: 1, retried: 0, requeued: 0 });
    expect(calls.filter((id) => id === 'too-big')).toHaveLength(1);
    expect(await broker.messageCount(config.workQueue)).toBe(0);
    expect(await broker.messageCount(tierQueueName(config.workQueue, 200))).toBe(0);
    const [parked] = await broker.drain(config.parkingQueue, 1);
    expect(parked?.content.equals(big)).toBe(true);
    expect(parked?.properties.messageId).toBe('too-big');
    expect(parked?.properties.headers).toMatchObject(odd);
    expect(parked?.properties.headers).not.toHaveProperty('x-retry-no');
    expect(parked?.properties.headers?.['x-death']).toEqual([expect.objectContaining({ queue: config.workQueue, reason: 'rejected', count: 1 })]);
    expect(logger.entries()).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: expect.stringContaining('message parked by the broker, without a copy'),
        messageId: 'too-big',
        bodyBytes: 2000,
      }),
    );
  });

  it('parks a failed message over MAX_MESSAGE_BYTES with a copy past the limit when the work queue does not dead-letter to the parking lot', async () => {
    // Prepare: the team's own work queue, declared before topology apply, without dead-lettering
    const broker = testBroker();
    const config = testConfig({ MAX_MESSAGE_BYTES: '1000' });
    await broker.channel.assertQueue(config.workQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    await setUpTopology(broker, config);
    const big = Buffer.alloc(2000, 9);
    broker.channel.sendToQueue(config.workQueue, big, { persistent: true, messageId: 'too-big', headers: { tenant: 'acme' } });
    broker.channel.sendToQueue(config.workQueue, Buffer.from('{}'), { persistent: true, messageId: 'good' });
    await broker.holds(config.workQueue, 2);
    // Act
    const summary = await runPull({
      config,
      handler: (m) => {
        if (m.body.length > 1000) throw new Error('partner 413');
      },
      budgetMs: 10_000,
      log: silentLogger,
    });
    // Assess
    expect(summary).toMatchObject({ received: 2, acked: 1, parked: 1, retried: 0, requeued: 0 });
    const [parked] = await broker.drain(config.parkingQueue, 1);
    expect(parked?.content.equals(big)).toBe(true);
    expect(parked?.properties.headers).toMatchObject({
      tenant: 'acme',
      'boomerang-error-name': 'Error',
      'boomerang-park-reason': expect.stringMatching(/^too large to copy: the body is 2000 bytes, over MAX_MESSAGE_BYTES \(1000\): parked instead of retried/),
    });
  });

  it('never parks as a crash loop a message only ever given back untried (MAX_MESSAGES, over and over)', async () => {
    // Prepare: each invocation takes one message and stops; the prefetch brings more, which no handler sees
    const broker = testBroker();
    const config = testConfig({ MAX_MESSAGES: '1', BATCH_SIZE: '10', CRASH_LOOP_LIMIT: '2' });
    await setUpTopology(broker, config);
    for (let i = 0; i < 6; i++) broker.channel.sendToQueue(config.workQueue, Buffer.from('{}'), { persistent: true, messageId: `m-${i}` });
    await broker.holds(config.workQueue, 6);
    const handled: string[] = [];
    // Act: within the test's 30 s, so that a run that does not finish fails with the invocations' summaries (a CI run hit the test's timeout once, under a doubled load)
    // A CI run of 2026-11-29 (3.10.8, loaded) parked one as a crash loop in its fourth invocation: a
    // failure now also names what the parking lot holds, with its headers, to find the second return.
    const summaries = await pullUntil(
      config,
      (m) => {
        handled.push(String(m.properties.messageId));
      },
      () => handled.length >= 6 && new Set(handled).size === 6,
      25_000,
    ).catch(async (error: Error) => {
      const parked = await broker.drain(config.parkingQueue, 1, 1000);
      const seen = parked.map((m) => ({ messageId: m.properties.messageId, headers: m.properties.headers }));
      throw new Error(`${error.message}\nhandled: ${JSON.stringify(handled)}\nparked: ${JSON.stringify(seen)}`);
    });
    // Assess
    expect(total(summaries).parked).toBe(0);
    expect(new Set(handled).size).toBe(6);
    expect(await broker.messageCount(config.parkingQueue)).toBe(0);
  });

  it('defers, never gives back, a delivery arriving after the stop that one more counted give-back would bring to CRASH_LOOP_LIMIT', async () => {
    // Prepare: "late" is held on another channel (basic.get) while the invocation takes "first" and
    // stops (MAX_MESSAGES=1); the handler of "first" gives "late" back, so that it reaches the
    // invocation after its take loop stopped, returned once already (x-delivery-count 1 before 4.3).
    const broker = testBroker();
    const config = testConfig({ MAX_MESSAGES: '1', BATCH_SIZE: '10', CRASH_LOOP_LIMIT: '2' });
    await setUpTopology(broker, config);
    broker.channel.sendToQueue(config.workQueue, Buffer.from('late'), { persistent: true, messageId: 'late' });
    await broker.holds(config.workQueue, 1);
    const holder = await broker.connection.createChannel();
    const late = await holder.get(config.workQueue, { noAck: false });
    if (late === false) throw new Error('"late" was not in the work queue');
    broker.channel.sendToQueue(config.workQueue, Buffer.from('first'), { persistent: true, messageId: 'first' });
    await broker.holds(config.workQueue, 1);
    const handled: string[] = [];
    // Act: the handler waits until the given-back "late" is in the invocation's hands
    const first = await pullOnce(config, async (message) => {
      handled.push(String(message.properties.messageId));
      holder.nack(late, false, true);
      // Back in the queue (seen, or 500 ms), then taken by the invocation's consumer (or 2 s)
      for (let waited = 0; waited < 500 && (await broker.messageCount(config.workQueue)) === 0; waited += 20) await sleep(20);
      for (let waited = 0; waited < 2000 && (await broker.messageCount(config.workQueue)) > 0; waited += 20) await sleep(20);
    });
    await holder.close();
    const rest = await pullUntil(
      config,
      (message) => {
        handled.push(String(message.properties.messageId));
      },
      () => handled.includes('late'),
    );
    // Assess: before 4.3 a give-back would have made it 2, a crash loop for the guard; 4.3 counts no give-back
    expect(first).toMatchObject(
      broker.giveBackCounts ? { received: 2, acked: 1, deferred: 1, requeued: 0 } : { received: 2, acked: 1, deferred: 0, requeued: 1 },
    );
    expect(total(rest).parked).toBe(0);
    expect(handled).toEqual(['first', 'late']);
    expect(await broker.messageCount(config.parkingQueue)).toBe(0);
  });

  it('parks a message whose headers leave no room for the retry bookkeeping at once, without its own headers, and says so', async () => {
    // Prepare: 65 400 bytes of header fit the original (amqplib encodes a header table in 64 KiB) but not a copy (about 270 bytes more)
    const broker = testBroker();
    const config = testConfig();
    await setUpTopology(broker, config);
    broker.channel.sendToQueue(config.workQueue, Buffer.from('{}'), {
      persistent: true,
      messageId: 'fat-headers',
      headers: { big: 'x'.repeat(65_400), tenant: 'acme' },
    });
    const logger = recordingLogger('info');
    // Act
    const summary = await runPull({
      config,
      handler: () => {
        throw new Error('partner 503');
      },
      budgetMs: 5000,
      log: logger.log,
    });
    // Assess
    expect(summary).toMatchObject({ received: 1, retried: 0, parked: 1 });
    const [parked] = await broker.drain(config.parkingQueue, 1);
    expect(parked?.properties.headers).not.toHaveProperty('big');
    expect(parked?.properties.headers).not.toHaveProperty('tenant');
    expect(parked?.properties.headers?.['boomerang-park-reason']).toBe('its retry copy could not be encoded; user headers dropped: too large to copy');
    expect(logger.entries()).toContainEqual(
      expect.objectContaining({ level: 'warn', message: 'message parked', messageId: 'fat-headers', reason: expect.stringContaining('user headers dropped') }),
    );
  });
});
