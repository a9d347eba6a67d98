import type amqp from 'amqplib';
import { describe, expect, it } from 'vitest';
import { createPullFunction } from '../../shared/pull/pull-function.js';
import { silentLogger } from '../helpers/fakes.js';
import type { Summary } from '../../shared/observability/summary.js';
import type { Config } from '../../shared/config/config.js';
import type { Handler } from '../../shared/message/message.js';
import type { TestBroker } from '../helpers/broker.js';
import { pullOnce, setUpTopology, testConfig } from '../helpers/engine.js';
import { BROKER_VERSION, NATIVE_BROKER } from '../helpers/broker-version.js';
import { useTestBroker } from '../helpers/topology.js';

/** The broker under test (amqplib's `serverProperties.version`): the check runs where native mode runs at all. */
const version = BROKER_VERSION;
const NATIVE = NATIVE_BROKER;

const testBroker = useTestBroker();

function nativeConfig(env: Record<string, string> = {}): Config {
  return testConfig({ DELAY_MODE: 'native', ...env });
}

/** One invocation of the pull function `pull`: its summary, or the error it failed with. */
async function invoke(pull: ReturnType<typeof createPullFunction>): Promise<{ summary?: Summary; error?: Error & { missing?: readonly string[] } }> {
  return pull({}, { awsRequestId: 'req-check', getRemainingTimeInMillis: () => 3000 }).then(
    (summary) => ({ summary: summary as Summary }),
    (error: unknown) => ({ error: error as Error }),
  );
}

/** The one message in `queue`, fetched (and acked) over 0-9-1: whether any consumer ever took it shows in its headers. */
async function onlyMessage(broker: TestBroker, queue: string): Promise<amqp.GetMessage> {
  expect(await broker.messageCount(queue)).toBe(1);
  const [message] = await broker.drain(queue, 1);
  return message!;
}

/** A quorum queue declared by hand, as someone would without `topology apply`. */
async function declarePlain(broker: TestBroker, queue: string): Promise<void> {
  broker.trackQueue(queue);
  await broker.channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
}

/** A pull function whose handler only counts its calls, on a hand-declared work queue holding one message. */
async function handMadeWorkQueue(broker: TestBroker, config: Config): Promise<{ pull: ReturnType<typeof createPullFunction>; calls: () => number }> {
  await declarePlain(broker, config.workQueue);
  broker.channel.sendToQueue(config.workQueue, Buffer.from('waiting'), { persistent: true });
  let calls = 0;
  return {
    pull: createPullFunction(
      () => {
        calls++;
      },
      { config, log: silentLogger },
    ),
    calls: () => calls,
  };
}

describe.runIf(NATIVE)(`the native function's topology check on RabbitMQ ${version}`, () => {
  it('passes a work queue that topology apply declared, and reports the parking lot depth of every invocation', async () => {
    // Prepare
    const broker = testBroker();
    const config = nativeConfig({ MAX_RETRIES: '0' });
    await setUpTopology(broker, config);
    broker.channel.sendToQueue(config.parkingQueue, Buffer.from('parked earlier'), { persistent: true });
    broker.channel.sendToQueue(config.workQueue, Buffer.from('fails'), { persistent: true });
    await broker.holds(config.parkingQueue, 1);
    await broker.holds(config.workQueue, 1);
    const handler: Handler = () => {
      throw new Error('partner down');
    };
    const pull = createPullFunction(handler, { config, log: silentLogger });
    // Act
    const first = await invoke(pull);
    const second = await invoke(pull);
    // Assess
    expect(first.error).toBeUndefined();
    expect(first.summary).toMatchObject({ received: 1, parked: 1 });
    // The park is dead-lettered by the broker after the settlement: the first count may not hold it yet.
    expect([1, 2]).toContain(first.summary?.parkedDepth);
    expect(second.summary?.parkedDepth).toBe(2);
  });

  it('fails before it takes a message when the work queue was declared by hand as a plain quorum queue, naming what it lacks', async () => {
    // Prepare
    const broker = testBroker();
    const config = nativeConfig();
    await declarePlain(broker, config.parkingQueue);
    const { pull, calls } = await handMadeWorkQueue(broker, config);
    // Act
    const { error } = await invoke(pull);
    // Assess
    expect(error?.name).toBe('TopologyDriftError');
    expect(error?.missing).toEqual(
      ['x-delayed-retry-type', 'x-dead-letter-exchange', 'x-dead-letter-routing-key', 'x-dead-letter-strategy', 'x-overflow'].map(
        (a) => `${config.workQueue}: ${a}`,
      ),
    );
    expect(error?.message).toContain('a parked message would be dropped');
    expect(error?.message).toContain('boomerang topology apply');
    expect(calls()).toBe(0);
    const message = await onlyMessage(broker, config.workQueue);
    expect(message.content.toString()).toBe('waiting');
    expect(message.fields.redelivered).toBe(false);
    expect(message.properties.headers?.['x-delivery-count']).toBeUndefined();
    expect(message.properties.headers?.['x-acquired-count']).toBeUndefined();
  });

  it('fails before it takes a message when the parking lot is missing, and checks again at the next invocation', async () => {
    // Prepare
    const broker = testBroker();
    const config = nativeConfig();
    await setUpTopology(broker, config);
    await broker.channel.deleteQueue(config.parkingQueue);
    broker.channel.sendToQueue(config.workQueue, Buffer.from('waiting'), { persistent: true });
    let calls = 0;
    const pull = createPullFunction(
      () => {
        calls++;
      },
      { config, log: silentLogger },
    );
    // Act
    const refused = await invoke(pull);
    const untouched = await onlyMessage(broker, config.workQueue);
    broker.channel.sendToQueue(config.workQueue, Buffer.from('again'), { persistent: true });
    await broker.holds(config.workQueue, 1);
    await setUpTopology(broker, config);
    const mended = await invoke(pull);
    // Assess
    expect(refused.error?.name).toBe('TopologyDriftError');
    expect(refused.error?.missing).toEqual([`queue ${config.parkingQueue}`]);
    expect(untouched.fields.redelivered).toBe(false);
    expect(untouched.properties.headers?.['x-delivery-count']).toBeUndefined();
    expect(mended.error).toBeUndefined();
    expect(mended.summary).toMatchObject({ received: 1, acked: 1, parkedDepth: 0 });
    expect(calls).toBe(1);
  });

  it('names the missing work queue and what to run, although its receiver attaches beside the check', async () => {
    // Prepare: the parking lot alone; the receiver's attach is refused while the check reads the queues
    const broker = testBroker();
    const config = nativeConfig();
    await declarePlain(broker, config.parkingQueue);
    broker.trackQueue(config.workQueue);
    let calls = 0;
    const pull = createPullFunction(
      () => {
        calls++;
      },
      { config, log: silentLogger },
    );
    // Act
    const { error } = await invoke(pull);
    // Assess
    expect(error?.name).toBe('TopologyDriftError');
    expect(error?.missing).toEqual([`queue ${config.workQueue}`]);
    expect(error?.message).toContain('boomerang topology apply');
    expect(calls).toBe(0);
  });

  it('checks only the first invocation of a container: a later one takes messages without asking again', async () => {
    // Prepare
    const broker = testBroker();
    const config = nativeConfig();
    await setUpTopology(broker, config);
    const pull = createPullFunction(() => undefined, { config, log: silentLogger });
    const checked = await invoke(pull);
    // A parking lot deleted after the check is not seen until the container is new (as the delay path in pull mode).
    await broker.channel.deleteQueue(config.parkingQueue);
    broker.channel.sendToQueue(config.workQueue, Buffer.from('ok'), { persistent: true });
    await broker.holds(config.workQueue, 1);
    // Act
    const unchecked = await invoke(pull);
    // Assess
    expect(checked.error).toBeUndefined();
    expect(unchecked.error).toBeUndefined();
    expect(unchecked.summary).toMatchObject({ received: 1, acked: 1 });
    expect(unchecked.summary?.parkedDepth).toBeUndefined();
  });

  it('runNativePull checks when not told otherwise', async () => {
    // Prepare
    const broker = testBroker();
    const config = nativeConfig();
    await declarePlain(broker, config.workQueue);
    await declarePlain(broker, config.parkingQueue);
    // Act
    const error = await pullOnce(config, () => undefined).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    // Assess
    expect(error?.name).toBe('TopologyDriftError');
  });
});

describe.runIf(!NATIVE)(`the native function's topology check on RabbitMQ ${version}`, () => {
  it('never gets as far: the broker is refused first, and the message is untouched', async () => {
    // Prepare
    const broker = testBroker();
    const config = nativeConfig();
    const { pull, calls } = await handMadeWorkQueue(broker, config);
    // Act
    const { error } = await invoke(pull);
    // Assess
    expect(error?.name).toBe('UnsupportedBrokerError');
    expect(calls()).toBe(0);
    const message = await onlyMessage(broker, config.workQueue);
    expect(message.fields.redelivered).toBe(false);
  });
});
