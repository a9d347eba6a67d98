import type { GetMessage } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { topologyOptionsFromConfig, type Config } from '../../shared/config/config.js';
import { EVERYTHING } from '../../shared/parked/filters.js';
import { listParked } from '../../shared/parked/list.js';
import { replayParked } from '../../shared/parked/replay.js';
import { showParked } from '../../shared/parked/show.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import type { TestBroker } from '../helpers/broker.js';
import { publishJson, pullOnce, setUpTopology, testConfig } from '../helpers/engine.js';
import { runParkedCommand } from '../helpers/parked-command.js';
import { useTestBroker } from '../helpers/topology.js';

const broker = useTestBroker();

/**
 * The work queue's safety net at work: a message fails once (Boomerang sends it through a delay
 * queue, whose TTL dead-letters it back), then someone rejects it from the work queue without
 * Boomerang, and the broker dead-letters it into the parking lot. Its `x-first-death-queue` names the
 * delay queue; its last death is the work queue.
 */
async function rejectedAfterADelay(b: TestBroker): Promise<{ config: Config; delayQueue: string }> {
  const config = testConfig({ MAX_RETRIES: '3' });
  await setUpTopology(b, config);
  const delayQueues = buildTopologyPlan(topologyOptionsFromConfig(config))
    .queues.filter((q) => q.role === 'delay')
    .map((q) => q.name);
  publishJson(b, config.workQueue, { orderId: 7 }, { messageId: 'order-7' });
  const summary = await pullOnce(config, () => Promise.reject(new Error('partner down')));
  expect(summary.retried).toBe(1);
  await b.holds(config.workQueue, 1);
  const back = (await b.channel.get(config.workQueue)) as GetMessage;
  b.channel.nack(back, false, false);
  await b.holds(config.parkingQueue, 1);
  const firstDeath = String(back.properties.headers?.['x-first-death-queue']);
  expect(delayQueues).toContain(firstDeath);
  return { config, delayQueue: firstDeath };
}

describe('a message the broker dead-lettered into the parking lot after it came back from a delay queue', () => {
  it('is listed and shown with its last queue and reason, and replayed to its work queue', async () => {
    // Prepare
    const b = broker();
    const { config, delayQueue } = await rejectedAfterADelay(b);
    // Act
    const listed = await runParkedCommand(b, config.parkingQueue, (ctx) => listParked(ctx, { filter: EVERYTHING, json: true }));
    const shown = await runParkedCommand(b, config.parkingQueue, (ctx) => showParked(ctx, { messageId: 'order-7', json: true }));
    const replayed = await runParkedCommand(b, config.parkingQueue, (ctx) =>
      replayParked(ctx, { filter: EVERYTHING, keepCount: false, dryRun: false, retryHeader: config.retryHeader }),
    );
    // Assess
    expect(JSON.parse(listed.printed[0] as string)).toMatchObject({
      messageId: 'order-7',
      errorName: '(rejected)',
      sourceQueue: config.workQueue,
      parkReason: `dead-lettered by the broker from ${config.workQueue} (rejected)`,
    });
    const entry = JSON.parse(shown.printed[0] as string) as { parked: Record<string, unknown>; headers: Record<string, unknown> };
    expect(entry.parked).toMatchObject({ error: '(rejected)', sourceQueue: config.workQueue });
    expect(entry.headers['x-first-death-queue']).toBe(delayQueue);
    const [major = 0, minor = 0] = String(b.connection.connection.serverProperties.version).split('.').map(Number);
    // x-last-death-* came with 3.13: there they name the work queue too.
    if (major > 3 || (major === 3 && minor >= 13)) {
      expect(entry.headers).toMatchObject({ 'x-last-death-queue': config.workQueue, 'x-last-death-reason': 'rejected' });
    }
    expect([...replayed.result.byQueue]).toEqual([[config.workQueue, 1]]);
    const inWork = await b.drain(config.workQueue, 1);
    expect(inWork.map((m) => m.properties.messageId)).toEqual(['order-7']);
    expect(inWork[0]?.properties.headers?.['x-death']).toBeUndefined();
    expect(await b.messageCount(delayQueue)).toBe(0);
    expect(await b.messageCount(config.parkingQueue)).toBe(0);
  });
});
