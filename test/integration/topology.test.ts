import { describe, expect, it } from 'vitest';
import { TopologyMismatchError } from '../../shared/topology/mismatch.js';
import { applyTopology } from '../../shared/topology/apply.js';
import { exactDeliveryExchangeName, exactLevelName } from '../../shared/topology/exact-names.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import { tierDelayRoute, tierQueueName } from '../../shared/topology/tiers.js';
import type { QueueType, TopologyOptions, TopologyPlan } from '../../shared/topology/types.js';
import { verifyTopology } from '../../shared/topology/verify.js';
import { uniqueName } from '../helpers/broker.js';
import { arrivals, publishConfirmed, topologyOptions, trackPlan, useTestBroker } from '../helpers/topology.js';

const testBroker = useTestBroker();

/** Unique names for one test: its work queue, parking lot and (exact mode) shared level family. */
function uniqueOptions(overrides: Partial<TopologyOptions> = {}): TopologyOptions {
  const workQueue = uniqueName('work');
  return topologyOptions({
    workQueue,
    parkingQueue: `${workQueue}.parking`,
    tierDelaysMs: [200, 1000],
    delayResolutionMs: 250,
    maxDelayMs: 1000,
    exactNamePrefix: uniqueName('levels'),
    ...overrides,
  });
}

/** The arguments `plan` gives `queue`, with `overrides` on top: a queue that differs in one argument only. */
function argumentsOf(plan: TopologyPlan, queue: string, overrides: Record<string, number>): Record<string, string | number> {
  return { ...plan.queues.find((q) => q.name === queue)?.arguments, ...overrides };
}

/** Whether `queue` exists. */
function queueExists(queue: string): Promise<boolean> {
  return testBroker().exists('queue', queue);
}

describe('applyTopology', () => {
  it.each<[TopologyOptions['delayMode'], QueueType]>([
    ['tiers', 'quorum'],
    ['tiers', 'classic'],
    ['exact', 'quorum'],
    ['exact', 'classic'],
  ])('in %s mode with %s queues creates everything once, then finds it unchanged', async (delayMode, queueType) => {
    // Prepare
    const broker = testBroker();
    const plan = buildTopologyPlan(uniqueOptions({ delayMode, queueType }));
    trackPlan(broker, plan);
    // Act
    const first = await applyTopology(broker.connection, plan);
    const second = await applyTopology(broker.connection, plan);
    // Assess
    const statuses = (report: typeof first): string[] => report.items.map((item) => item.status);
    const entities = plan.exchanges.length + plan.queues.length;
    // The delay-path marker last, once everything else matched.
    expect(statuses(first)).toEqual([...Array(entities).fill('created'), ...plan.bindings.map(() => 'bound'), 'created']);
    expect(first.items.at(-1)).toMatchObject({ kind: 'exchange', name: plan.marker });
    expect(second.items.find((item) => item.name === plan.queues.find((q) => q.role === 'work')?.name)?.status).toBe('exists');
    expect(statuses(second).filter((status) => status === 'created' || status === 'mismatch')).toEqual([]);
    expect((await verifyTopology(broker.connection, plan)).ok).toBe(true);
  });

  it('leaves an existing work queue with other arguments alone', async () => {
    // Prepare
    const broker = testBroker();
    const options = uniqueOptions();
    const plan = buildTopologyPlan(options);
    trackPlan(broker, plan);
    const teamArguments = { 'x-queue-type': 'classic', 'x-max-length': 10 };
    await broker.channel.assertQueue(options.workQueue, { durable: true, arguments: teamArguments });
    // Act
    const report = await applyTopology(broker.connection, plan);
    // Assess
    expect(report.items.find((item) => item.name === options.workQueue)).toMatchObject({ kind: 'queue', name: options.workQueue, status: 'exists' });
    // Redeclaring with the team's own arguments only succeeds if they are unchanged.
    await expect(broker.channel.assertQueue(options.workQueue, { durable: true, arguments: teamArguments })).resolves.toBeDefined();
  });

  it('throws a clear TopologyMismatchError for a delay queue with another TTL, and the connection keeps working', async () => {
    // Prepare
    const broker = testBroker();
    const options = uniqueOptions({ queueType: 'classic' });
    const plan = buildTopologyPlan(options);
    trackPlan(broker, plan);
    const delayQueue = tierQueueName(options.workQueue, 200);
    const other = argumentsOf(plan, delayQueue, { 'x-message-ttl': 999 });
    await broker.channel.assertQueue(delayQueue, { durable: true, arguments: other });
    // Act
    const applying = applyTopology(broker.connection, plan);
    // Assess
    await expect(applying).rejects.toThrow(TopologyMismatchError);
    await expect(applying).rejects.toMatchObject({ kind: 'queue', entity: delayQueue, argument: 'x-message-ttl' });
    await expect(applying).rejects.toThrow(`queue '${delayQueue}' has x-message-ttl = '999' but the topology expects '200'`);
    expect(await queueExists(tierQueueName(options.workQueue, 1000))).toBe(true); // everything else was still applied
    expect(await broker.messageCount(options.parkingQueue)).toBe(0); // the connection and its channel still work
  });

  it('lists every mismatch in one error, exchanges included', async () => {
    // Prepare
    const broker = testBroker();
    const options = uniqueOptions({ delayMode: 'exact' });
    const plan = buildTopologyPlan(options);
    trackPlan(broker, plan);
    await broker.channel.assertExchange(exactDeliveryExchangeName(options), 'topic', { durable: true });
    const level0 = exactLevelName(options, 0);
    await broker.channel.assertQueue(level0, { durable: true, arguments: argumentsOf(plan, level0, { 'x-message-ttl': 999 }) });
    // Act
    const error = await applyTopology(broker.connection, plan).catch((e: unknown) => e);
    // Assess
    expect(error).toMatchObject({
      name: 'TopologyMismatchError',
      kind: 'exchange',
      entity: exactDeliveryExchangeName(options),
      argument: 'alternate-exchange',
    });
    expect((error as Error).message).toContain('differs from the topology in 2 places');
    expect((error as Error).message).toContain(`queue '${level0}' has x-message-ttl = '999' but the topology expects '250'`);
  });
});

describe('verifyTopology', () => {
  it('reports everything missing before apply, and creates nothing', async () => {
    // Prepare
    const broker = testBroker();
    const plan = buildTopologyPlan(uniqueOptions({ delayMode: 'exact' }));
    trackPlan(broker, plan);
    // Act
    const report = await verifyTopology(broker.connection, plan);
    // Assess
    expect(report.ok).toBe(false);
    const statuses = new Set(report.items.filter((item) => item.kind !== 'binding').map((item) => item.status));
    expect([...statuses]).toEqual(['missing']);
    expect(report.items.filter((item) => item.kind === 'binding').every((item) => item.status === 'not-checked')).toBe(true);
    for (const queue of plan.queues) expect(await queueExists(queue.name)).toBe(false);
  });

  it('reports ok after apply, the work queue by existence only', async () => {
    // Prepare
    const broker = testBroker();
    const plan = buildTopologyPlan(uniqueOptions());
    trackPlan(broker, plan);
    await applyTopology(broker.connection, plan);
    // Act
    const report = await verifyTopology(broker.connection, plan);
    // Assess
    expect(report.ok).toBe(true);
    // Parking lot, its park notes, work queue, two tiers, and the delay-path marker
    expect(report.items.map((item) => item.status)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'ok']);
  });

  it('reports a different argument with both values', async () => {
    // Prepare
    const broker = testBroker();
    const options = uniqueOptions();
    const plan = buildTopologyPlan(options);
    trackPlan(broker, plan);
    await applyTopology(broker.connection, plan);
    const delayQueue = tierQueueName(options.workQueue, 1000);
    await broker.channel.deleteQueue(delayQueue);
    await broker.channel.assertQueue(delayQueue, { durable: true, arguments: argumentsOf(plan, delayQueue, { 'x-message-ttl': 5 }) });
    // Act
    const report = await verifyTopology(broker.connection, plan);
    // Assess
    expect(report.ok).toBe(false);
    expect(report.items.find((item) => item.name === delayQueue)).toMatchObject({
      kind: 'queue',
      name: delayQueue,
      status: 'different',
      argument: 'x-message-ttl',
      expected: '1000',
      actual: '5',
      messageCount: 0,
    });
  });
});

describe('tiers mode on the broker', () => {
  it('brings a copy back to the work queue only, after the tier TTL', async () => {
    // Prepare
    const broker = testBroker();
    const options = uniqueOptions({ queueType: 'classic' });
    const plan = buildTopologyPlan(options);
    const exchange = uniqueName('orders-x');
    const sibling = `${options.workQueue}.sibling`;
    trackPlan(broker, plan);
    broker.trackQueue(sibling);
    broker.trackExchange(exchange);
    await applyTopology(broker.connection, plan);
    await broker.channel.assertExchange(exchange, 'direct', { durable: false });
    await broker.channel.assertQueue(sibling, { durable: false });
    await broker.channel.bindQueue(options.workQueue, exchange, 'order.created');
    await broker.channel.bindQueue(sibling, exchange, 'order.created');
    const route = tierDelayRoute(options, 150);
    // Act
    const publishedAtMs = Date.now();
    await publishConfirmed(broker.connection, route, 'retry-1');
    const [arrival] = await arrivals(broker.connection, options.workQueue, 1);
    // Assess
    expect(route.delayMs).toBe(200);
    expect(arrival?.body).toBe('retry-1');
    expect(arrival!.atMs - publishedAtMs).toBeGreaterThanOrEqual(200);
    expect(await broker.messageCount(sibling)).toBe(0);
  });
});
