/**
 * A native work queue's messages apart (issue 33, item 5): a native retry waits in the work queue
 * itself, where AMQP counts only the ready messages; the console asks RabbitMQ's management HTTP API
 * (derived from AMQP_URL: the project's 4.3 node serves it on 15674, beside AMQP on 5674). Native
 * mode exists on 4.3 only: elsewhere this file has nothing to show.
 */
import { describe, expect, it } from 'vitest';
import { remoteConsoleBroker } from '../../shared/cli/remote-console-broker.js';
import { configBroker } from '../../shared/console/console-broker.js';
import { consoleQueuesFromConfig } from '../../shared/console/console-queue.js';
import { ConsoleService } from '../../shared/console/console-service.js';
import type { NativeCounts } from '../../shared/console/native-counts.js';
import { createOperatorConsoleFunction } from '../../shared/console/operator-console.js';
import type { Handler } from '../../shared/message/message.js';
import { connectAmqp10 } from '../../shared/native/amqp10-connection.js';
import { Amqp10Management } from '../../shared/native/amqp10-management.js';
import { BROKER_VERSION, NATIVE_BROKER } from '../helpers/broker-version.js';
import { AMQP_URL, type TestBroker, uniqueName } from '../helpers/broker.js';
import { pullOnce, setUpTopology, testConfig } from '../helpers/engine.js';
import { useTestBroker } from '../helpers/topology.js';

const testBroker = useTestBroker();

/** What RabbitMQ 4's management over AMQP 1.0 (the native function's) counts in `queue`. */
async function amqp10Count(queue: string): Promise<number | undefined> {
  const amqp10 = await connectAmqp10({ urls: [AMQP_URL], connectTimeoutMs: 5000, connectionName: uniqueName('amqp10') });
  try {
    const management = await Amqp10Management.open(amqp10.connection);
    return (await management.getQueue(queue))?.messageCount;
  } finally {
    await amqp10.close();
  }
}

/** Publishes `bodies` to `queue` and waits for the broker's confirms. */
async function publish(broker: TestBroker, queue: string, bodies: readonly string[]): Promise<void> {
  const channel = await broker.connection.createConfirmChannel();
  for (const body of bodies) channel.sendToQueue(queue, Buffer.from(body), { persistent: true, messageId: body });
  await channel.waitForConfirms();
  await channel.close();
}

describe.runIf(NATIVE_BROKER)(`a native work queue's messages apart, on RabbitMQ ${BROKER_VERSION}`, () => {
  it('counts the ready, those waiting for their delay and those being handled apart, where AMQP counts the ready ones only', async () => {
    // Prepare: 4 failures retried natively in 2 minutes, then 4 new messages, 1 of them held unacked by a consumer.
    const broker = testBroker();
    const config = testConfig({ DELAY_MODE: 'native', BACKOFF_INITIAL_MS: '120000', BACKOFF_MAX_MS: '240000', MAX_RETRIES: '3' });
    await setUpTopology(broker, config);
    await publish(broker, config.workQueue, ['ok-1', 'fail-1', 'fail-2', 'fail-3', 'fail-4']);
    const handler: Handler = (message) => {
      if (message.body.toString().startsWith('fail')) throw new Error('partner down');
    };
    const pulled = await pullOnce(config, handler);
    expect(pulled).toMatchObject({ acked: 1, retried: 4 });
    await publish(broker, config.workQueue, ['new-1', 'new-2', 'new-3', 'new-4']);
    const holder = await broker.connection.createChannel();
    await holder.prefetch(1);
    await holder.consume(config.workQueue, () => undefined);
    const consoleBroker = configBroker(config);
    const operator = createOperatorConsoleFunction([{ name: 'natorders', loadConfig: () => config }]);
    const remote = remoteConsoleBroker((request) => operator(request as Parameters<typeof operator>[0]), { name: 'natorders-operator' });
    const service = new ConsoleService({ queues: consoleQueuesFromConfig(config), broker: consoleBroker, retryHeader: config.retryHeader });
    try {
      // Act: the API samples a queue's counts every 5 s, so a new queue's come within a few seconds.
      const expected: Partial<NativeCounts> = { kind: 'counted', ready: 3, delayed: 4, unacked: 1 };
      await expect
        .poll(async () => (await consoleBroker.nativeCounts([config.workQueue])).get(config.workQueue), { timeout: 20_000, interval: 500 })
        .toMatchObject(expected);
      const direct = (await consoleBroker.nativeCounts([config.workQueue])).get(config.workQueue);
      const throughFunction = (await remote.nativeCounts([config.workQueue])).get(config.workQueue);
      const depths = await consoleBroker.depths([config.workQueue]);
      const overAmqp10 = await amqp10Count(config.workQueue);
      const overview = (await service.overview()) as { queues: { work: Record<string, unknown> }[] };
      const unreachable = configBroker({ ...config, managementUrl: 'http://127.0.0.1:1' });
      const withoutApi = (await new ConsoleService({
        queues: consoleQueuesFromConfig(config),
        broker: unreachable,
        retryHeader: config.retryHeader,
      }).overview()) as {
        queues: { work: Record<string, unknown> }[];
      };
      // Assess
      // AMQP 0-9-1 and the AMQP 1.0 management count the ready ones only.
      expect(depths.get(config.workQueue)).toBe(3);
      expect(overAmqp10).toBe(3);
      expect(direct).toMatchObject(expected);
      const dueInMs = (direct as { nextDueAtMs: number }).nextDueAtMs - Date.now();
      expect(dueInMs).toBeGreaterThan(60_000);
      expect(dueInMs).toBeLessThanOrEqual(120_000);
      expect(throughFunction).toMatchObject(expected);
      expect(overview.queues[0]?.work).toMatchObject({
        name: config.workQueue,
        depth: 3,
        native: { kind: 'counted', ready: 3, delayed: 4, unacked: 1, nextDueIn: expect.stringMatching(/^(1 min( \d+ s)?|\d+(\.\d)? s)$/) },
      });
      // Without the API the console still shows the ready ones, and says why the rest are not known and what sets the address.
      expect(withoutApi.queues[0]?.work).toMatchObject({
        depth: 3,
        native: {
          kind: 'unknown',
          reason: expect.stringContaining('http://127.0.0.1:1 did not answer'),
          option: 'advanced.managementUrl',
          variable: 'MANAGEMENT_URL',
        },
      });
    } finally {
      await holder.close();
    }
  });
});
