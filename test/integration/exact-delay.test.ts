import { describe, expect, it } from 'vitest';
import { applyTopology } from '../../shared/topology/apply.js';
import { exactDelayRoute } from '../../shared/topology/exact.js';
import { exactLevelName, exactUnroutableName } from '../../shared/topology/exact-names.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import type { TopologyOptions } from '../../shared/topology/types.js';
import { sleep, uniqueName } from '../helpers/broker.js';
import { arrivals, publishConfirmed, topologyOptions, trackPlan, useTestBroker } from '../helpers/topology.js';

/** R = 250 ms and up to 5 units: L = 3 levels, so 5 units (101b) also crosses a level by forwarding. */
const RESOLUTION_MS = 250;

const testBroker = useTestBroker();

/** Applies exact mode for each work queue, sharing one level family unique to this test; tracks it all. */
async function applyExact(prefix: string, ...workQueues: string[]): Promise<TopologyOptions[]> {
  const broker = testBroker();
  const all = workQueues.map((workQueue) =>
    topologyOptions({
      delayMode: 'exact',
      workQueue,
      parkingQueue: `${workQueue}.parking`,
      delayResolutionMs: RESOLUTION_MS,
      maxDelayMs: 5 * RESOLUTION_MS,
      exactNamePrefix: prefix,
    }),
  );
  for (const options of all) {
    const plan = buildTopologyPlan(options);
    trackPlan(broker, plan);
    await applyTopology(broker.connection, plan);
  }
  return all;
}

describe('exact mode on the broker', () => {
  it('delivers delays of 5, 3, 2 and 1 units in due order, none early', async () => {
    // Prepare
    const broker = testBroker();
    const [options] = await applyExact(uniqueName('levels'), uniqueName('work'));
    const sent: { body: string; delayMs: number; atMs: number }[] = [];
    // Act
    for (const units of [5, 3, 2, 1]) {
      const route = exactDelayRoute(options!, units * RESOLUTION_MS);
      sent.push({ body: `${units}`, delayMs: route.delayMs, atMs: Date.now() });
      await publishConfirmed(broker.connection, route, `${units}`);
    }
    const received = await arrivals(broker.connection, options!.workQueue, 4);
    // Assess
    expect(received.map((r) => r.body)).toEqual(['1', '2', '3', '5']);
    for (const { body, atMs } of received) {
      const copy = sent.find((s) => s.body === body)!;
      expect(atMs - copy.atMs, `${body} unit(s)`).toBeGreaterThanOrEqual(copy.delayMs);
    }
  });

  it('never gives queue `b` a message meant for `a.b`, though both are bound', async () => {
    // Prepare
    const broker = testBroker();
    const b = uniqueName('b');
    const ab = `a.${b}`;
    const [forB, forAB] = await applyExact(uniqueName('levels'), b, ab);
    // Act
    await publishConfirmed(broker.connection, exactDelayRoute(forAB!, 1), 'for a.b');
    await publishConfirmed(broker.connection, exactDelayRoute(forB!, 1), 'for b');
    const [toAB] = await broker.drain(ab, 1);
    const [toB] = await broker.drain(b, 1);
    // What is asserted is an absence: a level's time for a stray copy to land in the wrong queue, were one made.
    await sleep(RESOLUTION_MS);
    // Assess
    expect(toAB?.content.toString()).toBe('for a.b');
    expect(toB?.content.toString()).toBe('for b');
    expect(await broker.messageCount(b)).toBe(0);
    expect(await broker.messageCount(ab)).toBe(0);
  });

  it('keeps a message whose work queue was deleted in the unroutable queue, not stuck in a level', async () => {
    // Prepare
    const broker = testBroker();
    const prefix = uniqueName('levels');
    const [options] = await applyExact(prefix, uniqueName('work'));
    await broker.channel.deleteQueue(options!.workQueue);
    const marker = uniqueName('marker');
    // Act
    await publishConfirmed(broker.connection, exactDelayRoute(options!, 3 * RESOLUTION_MS), 'orphan', { marker });
    const [kept] = await broker.drain(exactUnroutableName(options!), 1);
    // Assess
    expect(kept?.content.toString()).toBe('orphan');
    expect(kept?.properties.headers?.marker).toBe(marker);
    expect(kept?.fields.routingKey).toBe(`0.1.1.${options!.workQueue}`);
    for (const level of [0, 1, 2]) expect(await broker.messageCount(exactLevelName(options!, level))).toBe(0);
  });
});
