import { describe, expect, it } from 'vitest';
import type { MessageTooLargeError } from '../../shared/errors.js';
import type { Handler } from '../../shared/message/message.js';
import { runPull } from '../../shared/engine/pull.js';
import { tierQueueName } from '../../shared/topology/tiers.js';
import { sleep, type TestBroker } from '../helpers/broker.js';
import { pullOnce, setUpTopology, testConfig } from '../helpers/engine.js';
import { recordingLogger } from '../helpers/fakes.js';
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
  while ((await broker.messageCount(queue)) === 0) await sleep(50);
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

  it('leaves a message over MAX_MESSAGE_BYTES untouched in the work queue and fails the invocation, naming the size', async () => {
    // Prepare
    const broker = testBroker();
    const config = testConfig({ MAX_MESSAGE_BYTES: String(SIXTEEN_MIB - 1), IDLE_TIMEOUT_MS: IDLE_FOR_BIG });
    await setUpTopology(broker, config);
    await publishSixteenMib(broker, config.workQueue, { messageId: 'too-big', headers: { tenant: 'acme' } });
    const { handler, calls } = failFirstAttempt();
    // Act
    const error = await pullOnce(config, handler, 20_000).then(() => undefined, (e: unknown) => e as MessageTooLargeError);
    // Assess: tried once, then given back as it came; nothing in the delay path or the parking lot
    expect(error?.name).toBe('MessageTooLargeError');
    expect(error?.message).toContain(`the body is ${SIXTEEN_MIB} bytes, over MAX_MESSAGE_BYTES (${SIXTEEN_MIB - 1})`);
    // The requeued original may come straight back before the loop stops: it goes back untried.
    expect(error?.summary).toMatchObject({ retried: 0, parked: 0, acked: 0, stoppedBecause: 'publish-failed' });
    expect(error?.summary.requeued).toBe(error?.summary.received);
    expect(calls).toEqual([0]);
    expect(await broker.messageCount(tierQueueName(config.workQueue, 200))).toBe(0);
    expect(await broker.messageCount(config.parkingQueue)).toBe(0);
    const [original] = await broker.drain(config.workQueue, 1);
    expect(original?.content.length).toBe(SIXTEEN_MIB);
    expect(original?.properties.headers).toMatchObject({ tenant: 'acme' });
    expect(original?.properties.headers).not.toHaveProperty('x-retry-no');
  });

  it('parks a message whose headers leave no room for the retry bookkeeping at once, without its own headers, and says so', async () => {
    // Prepare: 65 400 bytes of header fit the original (amqplib encodes a header table in 64 KiB) but not a copy (about 270 bytes more)
    const broker = testBroker();
    const config = testConfig();
    await setUpTopology(broker, config);
    broker.channel.sendToQueue(config.workQueue, Buffer.from('{}'), { persistent: true, messageId: 'fat-headers', headers: { big: 'x'.repeat(65_400), tenant: 'acme' } });
    const logger = recordingLogger('info');
    // Act
    const summary = await runPull({ config, handler: () => { throw new Error('partner 503'); }, budgetMs: 5000, log: logger.log });
    // Assess
    expect(summary).toMatchObject({ received: 1, retried: 0, parked: 1 });
    const [parked] = await broker.drain(config.parkingQueue, 1);
    expect(parked?.properties.headers).not.toHaveProperty('big');
    expect(parked?.properties.headers).not.toHaveProperty('tenant');
    expect(parked?.properties.headers?.['boomerang-park-reason']).toBe('its retry copy could not be encoded; user headers dropped: too large to copy');
    expect(logger.entries()).toContainEqual(expect.objectContaining({ level: 'warn', message: 'message parked', messageId: 'fat-headers', reason: expect.stringContaining('user headers dropped') }));
  });
});
