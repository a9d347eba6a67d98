import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tierQueueName } from '../../shared/topology/tiers.js';
import { sleep, TestBroker } from '../helpers/broker.js';
import { BROKER_EARLY_PER_HOP_MS, CLOCK_SLACK_MS, setUpTopology, testConfig } from '../helpers/engine.js';

/**
 * A retried copy keeps its `priority`. RabbitMQ 4.x quorum queues honour priorities (4.3: 32 levels,
 * each a FIFO of its own) and check TTL expiry at each level's head, where 3.10 quorum queues ignore
 * priorities. A tier delay queue holding copies of mixed priorities must still hand each back to the
 * work queue once its TTL has passed: not before, and not held behind a copy of another priority
 * that expires later.
 */
const TIER_MS = 1000;
// 0..9 as AMQP 0-9-1 clients use them, 31/32 around the 4.3 level count, the 255 maximum.
const PRIORITIES = [0, 9, 1, 8, 2, 7, 3, 6, 4, 5, 10, 31, 32, 100, 255];
// Half a tier: the second wave is still waiting when the first one is due.
const WAVE_GAP_MS = TIER_MS / 2;

type Arrival = { readonly id: string; readonly wave: number; readonly waitedMs: number };

describe('a tier delay queue (quorum) holding copies of mixed priorities', () => {
  let broker: TestBroker;

  beforeEach(async () => {
    broker = await TestBroker.open();
  });

  afterEach(async () => {
    await broker.close();
  });

  it('dead-letters every copy after its TTL, in the order they were delayed, whatever their priority', async () => {
    // Prepare: tiers of 1000 and 2000 ms on quorum queues, as the engine makes them.
    const config = testConfig({ QUEUE_TYPE: 'quorum', DELAY_MODE: 'tiers', BACKOFF_INITIAL_MS: String(TIER_MS), MAX_RETRIES: '2' });
    await setUpTopology(broker, config);
    const delayQueue = tierQueueName(config.workQueue, TIER_MS);
    const publishedAt = new Map<string, number>();
    const arrivals: Arrival[] = [];
    await broker.channel.consume(
      config.workQueue,
      (msg) => {
        if (msg === null) return;
        const id = String(msg.properties.messageId);
        arrivals.push({ id, wave: Number(id.split('-')[1]), waitedMs: Date.now() - (publishedAt.get(id) ?? Number.NaN) });
      },
      { noAck: true },
    );
    const confirms = await broker.connection.createConfirmChannel();

    // Act: two waves, each with every priority; the copies go straight to the delay queue, as a retry's do.
    for (const wave of [1, 2]) {
      for (const priority of PRIORITIES) {
        const id = `p-${wave}-${priority}`;
        publishedAt.set(id, Date.now());
        confirms.sendToQueue(delayQueue, Buffer.from(id), { persistent: true, priority, messageId: id });
      }
      await confirms.waitForConfirms();
      if (wave === 1) await sleep(WAVE_GAP_MS);
    }
    const expected = PRIORITIES.length * 2;
    const deadline = Date.now() + 20 * TIER_MS;
    while (arrivals.length < expected) {
      if (Date.now() > deadline) throw new Error(`${arrivals.length} of ${expected} copies back in ${config.workQueue} after ${20 * TIER_MS} ms`);
      await sleep(50);
    }
    await confirms.close();

    // Assess
    expect(arrivals.map((a) => a.id).sort()).toEqual([...publishedAt.keys()].sort());
    // Never early: the wall clock between our publish and our receipt only adds to the broker's wait.
    for (const a of arrivals) expect(a.waitedMs, a.id).toBeGreaterThanOrEqual(TIER_MS - CLOCK_SLACK_MS - BROKER_EARLY_PER_HOP_MS);
    // Never held behind a later copy: the whole first wave is back before any of the second. (A
    // classic queue with x-max-priority fails this on 3.10: the first wave came back ~650 ms late,
    // interleaved with the second.)
    const lastOfFirst = arrivals.map((a) => a.wave).lastIndexOf(1);
    const firstOfSecond = arrivals.map((a) => a.wave).indexOf(2);
    expect(lastOfFirst, JSON.stringify(arrivals)).toBeLessThan(firstOfSecond);
    expect(await broker.messageCount(delayQueue)).toBe(0);
  });
});
