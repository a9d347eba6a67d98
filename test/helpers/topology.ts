import type { ChannelModel } from 'amqplib';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { allExchanges } from '../../shared/topology/plan.js';
import type { DelayRoute, TopologyOptions, TopologyPlan } from '../../shared/topology/types.js';
import { TestBroker } from './broker.js';

/**
 * One `TestBroker` for the test file: opened before all tests (failing loudly when no broker answers),
 * cleaned up after each test, closed after all. Call at the top level; the getter works inside tests.
 */
function useTestBroker(): () => TestBroker {
  let broker: TestBroker | undefined;
  beforeAll(async () => {
    broker = await TestBroker.open();
  });
  afterEach(async () => {
    await broker?.cleanup();
  });
  afterAll(async () => {
    await broker?.close();
  });
  return () => {
    if (!broker) throw new Error('The test broker is not open: call useTestBroker() at the top level of the file');
    return broker;
  };
}

/** Topology options for tests: a tiers-mode quorum setup for `orders`, with `overrides` on top. */
function topologyOptions(overrides: Partial<TopologyOptions> = {}): TopologyOptions {
  return {
    workQueue: 'orders',
    parkingQueue: 'orders.parking',
    delayMode: 'tiers',
    queueType: 'quorum',
    tierDelaysMs: [1000, 5000, 30_000],
    delayResolutionMs: 1000,
    maxDelayMs: 15_000,
    ...overrides,
  };
}

/** Registers every queue and exchange of `plan` for deletion in `broker.cleanup()`. */
function trackPlan(broker: TestBroker, plan: TopologyPlan): void {
  broker.trackQueue(...plan.queues.map((q) => q.name));
  broker.trackExchange(...allExchanges(plan).map((x) => x.name));
}

/** Publishes one persistent message along `route` and waits for the broker's confirm. */
async function publishConfirmed(connection: ChannelModel, route: DelayRoute, body: string, headers: Record<string, string> = {}): Promise<void> {
  const channel = await connection.createConfirmChannel();
  channel.publish(route.exchange, route.routingKey, Buffer.from(body), { persistent: true, headers });
  await channel.waitForConfirms();
  await channel.close();
}

type Arrival = { readonly body: string; readonly atMs: number };

/** Consumes up to `count` messages from `queue` (acked), noting when each arrived; stops after `timeoutMs`. */
async function arrivals(connection: ChannelModel, queue: string, count: number, timeoutMs = 10_000): Promise<Arrival[]> {
  const channel = await connection.createChannel();
  const out: Arrival[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, timeoutMs);
    channel
      .consume(
        queue,
        (msg) => {
          if (!msg) return;
          out.push({ body: msg.content.toString(), atMs: Date.now() });
          if (out.length === count) {
            clearTimeout(timer);
            resolve();
          }
        },
        { noAck: true },
      )
      .catch(reject);
  });
  await channel.close();
  return out;
}

export { arrivals, publishConfirmed, topologyOptions, trackPlan, useTestBroker };
