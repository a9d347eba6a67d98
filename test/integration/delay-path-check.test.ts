import { describe, expect, it } from 'vitest';
import type { TopologyDriftError } from '../../shared/errors.js';
import { applyTopology } from '../../shared/topology/apply.js';
import { checkDelayPath } from '../../shared/topology/delay-path-check.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import { tierQueueName } from '../../shared/topology/tiers.js';
import { uniqueName } from '../helpers/broker.js';
import { topologyOptions, trackPlan, useTestBroker } from '../helpers/topology.js';

const testBroker = useTestBroker();

/** A tiers topology (three tiers) of its own, applied on the broker and deleted after the test. */
async function appliedTopology() {
  const workQueue = uniqueName('check');
  const options = topologyOptions({ workQueue, parkingQueue: `${workQueue}.parking`, tierDelaysMs: [1000, 5000, 30_000] });
  const plan = buildTopologyPlan(options);
  trackPlan(testBroker(), plan);
  await applyTopology(testBroker().connection, plan);
  return { workQueue, options };
}

describe('checkDelayPath on the broker', () => {
  it('passes when every destination exists, and leaves the connection usable', async () => {
    // Prepare
    const { workQueue, options } = await appliedTopology();
    // Act
    await checkDelayPath(testBroker().connection, options);
    // Assess: the connection still opens channels
    const channel = await testBroker().connection.createChannel();
    await channel.close();
  });

  it('names every missing destination, not only the first, and the connection survives', async () => {
    // Prepare: two tier queues deleted after apply
    const { workQueue, options } = await appliedTopology();
    const gone = [tierQueueName(workQueue, 1000), tierQueueName(workQueue, 30_000)];
    for (const queue of gone) await testBroker().channel.deleteQueue(queue);
    // Act
    const error = await checkDelayPath(testBroker().connection, options).then(() => undefined, (e: unknown) => e as TopologyDriftError);
    // Assess
    expect(error?.name).toBe('TopologyDriftError');
    expect(error?.missing).toEqual(gone.map((q) => `queue ${q}`));
    expect(error?.message).toContain(`queue ${gone[0]}, queue ${gone[1]}`);
    const channel = await testBroker().connection.createChannel();
    await channel.close();
  });

  it('on a given channel: leaves it open for the consumer when all exist; names what is missing otherwise', async () => {
    // Prepare
    const { workQueue, options } = await appliedTopology();
    const channel = await testBroker().connection.createConfirmChannel();
    // Act + Assess: all there, the channel still answers
    await checkDelayPath(testBroker().connection, options, channel);
    expect((await channel.checkQueue(workQueue)).queue).toBe(workQueue);
    // Act: one gone
    await testBroker().channel.deleteQueue(`${workQueue}.parking`);
    const error = await checkDelayPath(testBroker().connection, options, channel).then(() => undefined, (e: unknown) => e as TopologyDriftError);
    // Assess
    expect(error?.missing).toEqual([`queue ${workQueue}.parking`]);
    await channel.close().catch(() => undefined);
  });
});
