import { describe, expect, it } from 'vitest';
import type { TopologyDriftError } from '../../shared/core/invocation-errors.js';
import { applyTopology } from '../../shared/topology/apply.js';
import { checkDelayPath } from '../../shared/copy/delay-path-check.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import { tierQueueName } from '../../shared/topology/tiers.js';
import { verifyTopology } from '../../shared/topology/verify.js';
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
  return { workQueue, options, marker: plan.marker as string };
}

const exchangeExists = (name: string): Promise<boolean> => testBroker().exists('exchange', name);

const driftOf = (promise: Promise<void>) =>
  promise.then(
    () => undefined,
    (e: unknown) => e as TopologyDriftError,
  );

describe('checkDelayPath on the broker', () => {
  it('passes on an applied topology (apply made its marker), and leaves the connection usable', async () => {
    // Prepare
    const { options, marker } = await appliedTopology();
    // Act
    await checkDelayPath(testBroker().connection, options);
    // Assess
    expect(await exchangeExists(marker)).toBe(true);
    const channel = await testBroker().connection.createChannel();
    await channel.close();
  });

  it('without the marker (an apply of an older version), checks each destination and names every missing one', async () => {
    // Prepare: the marker and two tier queues gone
    const { workQueue, options, marker } = await appliedTopology();
    await testBroker().channel.deleteExchange(marker);
    const gone = [tierQueueName(workQueue, 1000), tierQueueName(workQueue, 30_000)];
    for (const queue of gone) await testBroker().channel.deleteQueue(queue);
    // Act
    const error = await driftOf(checkDelayPath(testBroker().connection, options));
    // Assess
    expect(error?.name).toBe('TopologyDriftError');
    expect(error?.missing).toEqual(gone.map((q) => `queue ${q}`));
    expect(error?.message).toContain(`queue ${gone[0]}, queue ${gone[1]}`);
    const channel = await testBroker().connection.createChannel();
    await channel.close();
  });

  it('without the marker and with nothing missing, passes', async () => {
    // Prepare
    const { options, marker } = await appliedTopology();
    await testBroker().channel.deleteExchange(marker);
    // Act + Assess
    await checkDelayPath(testBroker().connection, options);
  });

  it('trusts a standing marker (a queue deleted by hand after apply goes unseen), until told not to: then it names the queue and deletes the marker', async () => {
    // Prepare
    const { workQueue, options, marker } = await appliedTopology();
    const gone = tierQueueName(workQueue, 5000);
    await testBroker().channel.deleteQueue(gone);
    // Act + Assess: the marker answers for the deleted queue
    await checkDelayPath(testBroker().connection, options);
    // Act: after a copy came back unroutable, the pull function stops trusting the marker
    const error = await driftOf(checkDelayPath(testBroker().connection, options, false));
    // Assess: the queue is named, and the marker is gone for every container's next cold start
    expect(error?.missing).toEqual([`queue ${gone}`]);
    expect(await exchangeExists(marker)).toBe(false);
    expect((await driftOf(checkDelayPath(testBroker().connection, options)))?.missing).toEqual([`queue ${gone}`]);
  });

  it('names another marker for another config, so an apply of the old one does not vouch for it', async () => {
    // Prepare
    const { options, marker } = await appliedTopology();
    const changed = { ...options, tierDelaysMs: [1000, 5000, 60_000] };
    // Act
    const error = await driftOf(checkDelayPath(testBroker().connection, changed));
    // Assess
    expect(buildTopologyPlan(changed).marker).not.toBe(marker);
    expect(error?.missing).toEqual([`queue ${tierQueueName(options.workQueue, 60_000)}`]);
  });

  it('verify reports a missing marker, and apply makes it again', async () => {
    // Prepare
    const { options, marker } = await appliedTopology();
    await testBroker().channel.deleteExchange(marker);
    const plan = buildTopologyPlan(options);
    // Act
    const before = await verifyTopology(testBroker().connection, plan);
    await applyTopology(testBroker().connection, plan);
    const after = await verifyTopology(testBroker().connection, plan);
    // Assess
    expect(before.ok).toBe(false);
    expect(before.items).toContainEqual(expect.objectContaining({ kind: 'exchange', name: marker, status: 'missing' }));
    expect(after.ok).toBe(true);
  });
});
