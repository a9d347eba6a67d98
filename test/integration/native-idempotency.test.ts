import { describe, expect, it } from 'vitest';
import { runNativePull } from '../../shared/native/native-pull.js';
import { silentLogger } from '../helpers/fakes.js';
import { BROKER_VERSION, NATIVE_BROKER } from '../helpers/broker-version.js';
import { setUpTopology, testConfig } from '../helpers/engine.js';
import { redisKind, useIdempotencyStore } from '../helpers/idempotency-stores.js';
import { useTestBroker } from '../helpers/topology.js';

const testBroker = useTestBroker();

describe.runIf(NATIVE_BROKER)(`native delays with idempotency on, RabbitMQ ${BROKER_VERSION}`, () => {
  const { guard } = useIdempotencyStore(redisKind(), silentLogger);

  it('accepts a message whose key already completed without calling the handler', async () => {
    // Prepare
    const broker = testBroker();
    const config = testConfig({ DELAY_MODE: 'native' });
    await setUpTopology(broker, config);
    for (let i = 0; i < 2; i++) broker.channel.sendToQueue(config.workQueue, Buffer.from('{}'), { persistent: true, messageId: `order-${config.workQueue}` });
    let calls = 0;
    // Act
    const summary = await runNativePull({
      config,
      handler: () => {
        calls++;
      },
      budgetMs: 3000,
      log: silentLogger,
      idempotency: guard(),
    });
    // Assess
    expect(calls).toBe(1);
    expect(summary).toMatchObject({ received: 2, acked: 1, skippedDuplicates: 1 });
    expect(await broker.messageCount(config.workQueue)).toBe(0);
  });
});
