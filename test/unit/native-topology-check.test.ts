import { describe, expect, it } from 'vitest';
import { loadConfig, topologyOptionsFromConfig } from '../../shared/config/config.js';
import type { QueueInfo } from '../../shared/native/amqp10-management.js';
import { checkNativeTopology, judgeNativeTopology } from '../../shared/native/native-topology-check.js';
import { nativeWorkQueue } from '../../shared/topology/native-queue.js';
import { recordingLogger } from '../helpers/fakes.js';

const config = loadConfig({ AMQP_URL: 'amqp://guest:guest@127.0.0.1:5674', WORK_QUEUE: 'orders', DELAY_MODE: 'native' });
const spec = nativeWorkQueue(topologyOptionsFromConfig(config));
const lotName = config.parkingQueue;

function queue(name: string, type: string, args: QueueInfo['arguments'], messageCount = 0): QueueInfo {
  return { name, type, arguments: args, messageCount, consumerCount: 0 };
}

/** The work queue as `topology apply` declares it. */
const applied = queue('orders', 'quorum', spec.arguments);
const plain = queue('orders', 'quorum', { 'x-queue-type': 'quorum' });
const lot = queue(lotName, 'quorum', { 'x-queue-type': 'quorum', 'x-delivery-limit': -1 }, 3);

describe('judgeNativeTopology', () => {
  it('finds a work queue declared as planned and an existing parking lot in order', () => {
    // Act
    const finding = judgeNativeTopology(spec, lotName, applied, lot);
    // Assess
    expect(finding).toEqual({ tolerated: [] });
  });

  it.each([
    ['the work queue', undefined, lot, ['queue orders']],
    ['the parking lot', applied, undefined, [`queue ${lotName}`]],
    ['both', undefined, undefined, ['queue orders', `queue ${lotName}`]],
  ])('names %s missing and says to apply', (_case, work, parking, missing) => {
    // Act
    const { drift } = judgeNativeTopology(spec, lotName, work, parking);
    // Assess
    expect(drift?.missing).toEqual(missing);
    expect(drift?.message).toContain('No message was taken: run `boomerang topology apply`');
  });

  it('refuses a plain quorum queue, naming each setting it lacks and what would go wrong, and says a policy does not count', () => {
    // Act
    const { drift, tolerated } = judgeNativeTopology(spec, lotName, plain, lot);
    // Assess
    expect(drift?.missing).toEqual(
      ['x-delayed-retry-type', 'x-dead-letter-exchange', 'x-dead-letter-routing-key', 'x-dead-letter-strategy', 'x-overflow'].map((a) => `orders: ${a}`),
    );
    expect(drift?.message).toContain("x-dead-letter-exchange none, needs '' (a parked message would be dropped)");
    expect(drift?.message).toContain("x-delayed-retry-type none, needs 'failed' (a retry would come back at once");
    expect(drift?.message).toMatch(/A policy does not count here/);
    expect(tolerated.map((d) => d.argument)).toEqual(['x-delayed-retry-min', 'x-delayed-retry-max', 'x-delivery-limit']);
  });

  it('refuses a classic queue by its type, though its arguments have every dead-letter setting', () => {
    // Act
    const { drift } = judgeNativeTopology(spec, lotName, queue('orders', 'classic', { ...spec.arguments, 'x-queue-type': 'classic' }), lot);
    // Assess
    expect(drift?.missing).toEqual(['orders: x-queue-type']);
    expect(drift?.message).toContain("x-queue-type 'classic', needs 'quorum'");
  });

  it('refuses a queue that dead-letters to another queue', () => {
    // Act
    const { drift } = judgeNativeTopology(spec, lotName, queue('orders', 'quorum', { ...spec.arguments, 'x-dead-letter-routing-key': 'elsewhere' }), lot);
    // Assess
    expect(drift?.missing).toEqual(['orders: x-dead-letter-routing-key']);
  });

  it('tolerates another delivery limit and retry range: they pace crashes, they lose nothing', () => {
    // Act
    const finding = judgeNativeTopology(
      spec,
      lotName,
      queue('orders', 'quorum', { ...spec.arguments, 'x-delivery-limit': 50, 'x-delayed-retry-min': 100 }),
      lot,
    );
    // Assess
    expect(finding.drift).toBeUndefined();
    expect(finding.tolerated.map((d) => [d.argument, d.actual])).toEqual([
      ['x-delayed-retry-min', '100'],
      ['x-delivery-limit', '50'],
    ]);
  });
});

describe('checkNativeTopology', () => {
  it('reads both queues and passes quietly when all is in order', async () => {
    // Prepare
    const read: string[] = [];
    const { log, lines } = recordingLogger();
    // Act
    await checkNativeTopology(
      async (name) => {
        read.push(name);
        return name === 'orders' ? applied : lot;
      },
      config,
      log,
    );
    // Assess
    expect(read.sort()).toEqual(['orders', lotName].sort());
    expect(lines).toEqual([]);
  });

  it('throws a TopologyDriftError with what is missing', async () => {
    // Act
    const error = await checkNativeTopology(async (name) => (name === 'orders' ? plain : lot), config, recordingLogger().log).then(
      () => undefined,
      (e: unknown) => e as Error & { missing?: string[] },
    );
    // Assess
    expect(error?.name).toBe('TopologyDriftError');
    expect(error?.missing).toContain('orders: x-dead-letter-exchange');
  });

  it('warns once about tolerated differences, naming them', async () => {
    // Prepare
    const { log, entries } = recordingLogger();
    const other = queue('orders', 'quorum', { ...spec.arguments, 'x-delivery-limit': 50 });
    // Act
    await checkNativeTopology(async (name) => (name === 'orders' ? other : lot), config, log);
    // Assess
    const [warning] = entries();
    expect(warning?.differences).toBe(`x-delivery-limit '50' (the config plans '${spec.arguments['x-delivery-limit']}')`);
  });
});
