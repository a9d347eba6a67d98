/**
 * Where a delivery limit can drop messages (the parking lot, the team's work queue) and every differing
 * argument, on the broker under test (AMQP_URL: 3.10 by default, 4.3 at :5674, 4.0 at :5675). Expectations that differ
 * by version branch on the version the broker announces; nothing is skipped.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TopologyMismatchError } from '../../shared/topology/mismatch.js';
import { applyTopology } from '../../shared/topology/apply.js';
import { brokerVersionOf } from '../../shared/topology/broker-ops.js';
import { brokerMajor } from '../../shared/topology/delivery-limit.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import { deadLetterPolicy, noDeliveryLimitPolicy, type PolicyFix, policyArgv } from '../../shared/topology/policy-fix.js';
import { tierQueueName } from '../../shared/topology/tiers.js';
import type { TopologyOptions, TopologyPlan } from '../../shared/topology/types.js';
import { verifyTopology } from '../../shared/topology/verify.js';
import { BrokerCtl } from '../helpers/broker-ctl.js';
import { uniqueName } from '../helpers/broker.js';
import { publishConfirmed, topologyOptions, trackPlan, useTestBroker } from '../helpers/topology.js';

const testBroker = useTestBroker();
const policiesSet: string[] = [];

/** rabbitmqctl against the node behind AMQP_URL. */
async function ctl(args: readonly string[]): Promise<void> {
  await BrokerCtl.forUrl().ctl(args);
}

/** Sets the policy exactly as the printed command does, and clears it after the test. */
async function setPolicy(fix: PolicyFix): Promise<void> {
  policiesSet.push(fix.name);
  await ctl(policyArgv(fix));
}

afterEach(async () => {
  for (const name of policiesSet.splice(0)) await ctl(['clear_policy', name]);
});

function major(): number {
  const value = brokerMajor(brokerVersionOf(testBroker().connection));
  if (value === undefined) throw new Error('the broker did not announce its version');
  return value;
}

function uniqueOptions(overrides: Partial<TopologyOptions> = {}): TopologyOptions {
  const workQueue = uniqueName('risk');
  return topologyOptions({ workQueue, parkingQueue: `${workQueue}.parked`, tierDelaysMs: [1000], maxDelayMs: 1000, ...overrides });
}

function tracked(options: TopologyOptions): TopologyPlan {
  const plan = buildTopologyPlan(options);
  trackPlan(testBroker(), plan);
  return plan;
}

/** A unique plan for this broker's version, with its work queue or parking lot declared beforehand with `args`. */
async function declaredBefore(
  queue: 'workQueue' | 'parkingQueue',
  args: Record<string, string | number>,
): Promise<{ broker: ReturnType<typeof testBroker>; options: TopologyOptions; plan: TopologyPlan }> {
  const broker = testBroker();
  const options = uniqueOptions({ brokerVersion: brokerVersionOf(broker.connection) });
  const plan = tracked(options);
  await broker.channel.assertQueue(options[queue], { durable: true, arguments: args });
  return { broker, options, plan };
}

/** Publishes one message to `queue` and fails its delivery `times` times (taken, then its channel closed unacked, as a crash does). */
async function failDeliveries(queue: string, times: number): Promise<void> {
  const { connection } = testBroker();
  await publishConfirmed(connection, { exchange: '', routingKey: queue, delayMs: 0 }, 'm');
  for (let i = 0; i < times; i++) {
    const ch = await connection.createChannel();
    let message: unknown = false;
    // A returned message is back in the queue after the close completes; a few gets cover the hand-over.
    for (let tries = 0; tries < 200 && !message; tries++) message = await ch.get(queue, { noAck: false });
    await ch.close();
    if (!message) return;
  }
}

/** The bodies in `queue` once the one expected message is there (a returned message takes a moment to be ready again). */
async function bodies(queue: string): Promise<string[]> {
  return (await testBroker().drain(queue, 1)).map((m) => m.content.toString());
}

describe('the parking lot', () => {
  it('is declared so that no delivery limit drops from it: a parked message survives 25 failed deliveries', async () => {
    // Prepare
    const broker = testBroker();
    const options = uniqueOptions({ brokerVersion: brokerVersionOf(broker.connection) });
    const plan = tracked(options);
    // Act
    const report = await applyTopology(broker.connection, plan);
    await failDeliveries(options.parkingQueue, 25);
    // Assess
    expect(await bodies(options.parkingQueue)).toEqual(['m']);
    expect(plan.queues[0]?.arguments['x-delivery-limit']).toBe(major() >= 4 ? -1 : undefined);
    expect(report.warnings).toEqual([]);
    expect(report.items[0]?.detail).toMatch(/^no delivery limit \(/);
  });

  it('verify reports an older parking lot without x-delivery-limit, and on 4.x offers the policy that lifts the default', async () => {
    // Prepare: declared as Boomerang did before, with the queue type only.
    const { broker, options, plan } = await declaredBefore('parkingQueue', { 'x-queue-type': 'quorum' });
    // Act
    const report = await verifyTopology(broker.connection, plan);
    // Assess
    const parking = report.items.find((item) => item.name === options.parkingQueue);
    expect(parking?.status).toBe('ok');
    if (major() < 4) {
      expect(parking?.detail).toMatch(/^no delivery limit \(RabbitMQ 3\.x quorum queues have none unless set\)/);
      expect(report.warnings).toEqual([]);
      return;
    }
    expect(parking?.detail).toBe('delivery limit 20: parked messages can be dropped');
    expect(report.warnings).toEqual([
      { queue: options.parkingQueue, message: expect.stringContaining('the RabbitMQ 4.x default'), fix: noDeliveryLimitPolicy(options.parkingQueue) },
    ]);
    // The offered policy works: the message survives past the default of 20.
    await setPolicy(noDeliveryLimitPolicy(options.parkingQueue));
    await failDeliveries(options.parkingQueue, 25);
    expect(await bodies(options.parkingQueue)).toEqual(['m']);
  });

  it('refuses a plan made for 4.x on a 3.x broker, where x-delivery-limit -1 drops at the first failed delivery', async () => {
    // Prepare
    const broker = testBroker();
    const plan = tracked(uniqueOptions({ brokerVersion: '4.0.0' }));
    // Act
    const applying = applyTopology(broker.connection, plan);
    // Assess
    if (major() < 4) await expect(applying).rejects.toThrow(/planned for RabbitMQ 4\.x .* drops a message at its first failed delivery/);
    else await expect(applying).resolves.toMatchObject({ warnings: [] });
  });
});

describe("the team's work queue", () => {
  it('verify and apply warn that a quorum work queue with a delivery limit and no dead-letter target drops, and the offered policy parks instead', async () => {
    // Prepare
    const { broker, options, plan } = await declaredBefore('workQueue', { 'x-queue-type': 'quorum', 'x-delivery-limit': 2 });
    // Act
    const verified = await verifyTopology(broker.connection, plan);
    const applied = await applyTopology(broker.connection, plan);
    // Assess
    const expected = {
      queue: options.workQueue,
      message: expect.stringMatching(/delivery limit \(2: its x-delivery-limit\) and no dead-letter target: a message is dropped after 2 failed deliveries/),
      fix: deadLetterPolicy(options.workQueue, options.parkingQueue),
    };
    expect(verified.warnings).toEqual([expected]);
    expect(applied.warnings).toEqual([expected]);
    expect((await verifyTopology(broker.connection, plan)).ok).toBe(true);
    // The offered policy works: past the limit the message is parked, not dropped.
    await setPolicy(deadLetterPolicy(options.workQueue, options.parkingQueue));
    await failDeliveries(options.workQueue, 3);
    expect(await bodies(options.parkingQueue)).toEqual(['m']);
  });

  it('on 4.x warns of the default limit of 20 on a quorum work queue declared without arguments; on 3.x does not', async () => {
    // Prepare
    const { broker, options, plan } = await declaredBefore('workQueue', { 'x-queue-type': 'quorum' });
    // Act
    const report = await verifyTopology(broker.connection, plan);
    // Assess
    const work = report.items.find((item) => item.name === options.workQueue);
    if (major() >= 4) {
      expect(work?.detail).toBe('left to its team (quorum, delivery limit 20, no dead-letter target)');
      expect(report.warnings.map((w) => w.queue)).toEqual([options.workQueue]);
      expect(report.warnings[0]?.message).toContain('(20: the RabbitMQ 4.x default, as it has no x-delivery-limit)');
    } else {
      expect(work?.detail).toBe('left to its team (quorum, no delivery limit, no dead-letter target)');
      expect(report.warnings).toEqual([]);
    }
  });

  it('says nothing when the work queue dead-letters', async () => {
    // Prepare
    const { broker, options, plan } = await declaredBefore('workQueue', { 'x-queue-type': 'quorum', 'x-delivery-limit': 5, 'x-dead-letter-exchange': '' });
    // Act
    const report = await verifyTopology(broker.connection, plan);
    // Assess
    expect(report.items.find((item) => item.name === options.workQueue)?.detail).toBe(
      "left to its team (quorum, delivery limit 5, dead-letters to exchange '')",
    );
    expect(report.warnings).toEqual([]);
  });
});

describe('mismatches', () => {
  it('verify and apply name every differing argument of a queue, with both values, and what deleting it costs', async () => {
    // Prepare
    const broker = testBroker();
    const options = uniqueOptions({ queueType: 'classic' });
    const plan = tracked(options);
    const delayQueue = tierQueueName(options.workQueue, 1000);
    await broker.channel.assertQueue(delayQueue, {
      durable: true,
      arguments: { 'x-queue-type': 'classic', 'x-message-ttl': 600_000, 'x-dead-letter-exchange': '', 'x-max-length': 9 },
    });
    await publishConfirmed(broker.connection, { exchange: '', routingKey: delayQueue, delayMs: 0 }, 'in flight');
    // Act
    const report = await verifyTopology(broker.connection, plan);
    const error = await applyTopology(broker.connection, plan).catch((e: unknown) => e);
    // Assess
    const item = report.items.find((i) => i.name === delayQueue);
    expect(item?.status).toBe('different');
    expect(item?.messageCount).toBe(1);
    expect(new Map(item?.differences?.map((d) => [d.argument, [d.expected, d.actual]]))).toEqual(
      new Map([
        ['x-message-ttl', ['1000', '600000']],
        ['x-dead-letter-routing-key', [options.workQueue, undefined]],
        ['x-max-length', [undefined, '9']],
      ]),
    );
    expect(error).toBeInstanceOf(TopologyMismatchError);
    const message = (error as Error).message;
    for (const argument of ['x-message-ttl', 'x-dead-letter-routing-key', 'x-max-length']) expect(message).toContain(argument);
    expect(message).toContain('Move its 1 message elsewhere first');
    expect(message).not.toContain('topology -- apply');
  });
});

describe('classic queues', () => {
  it('apply and verify warn that classic delay queues drop a retry whose delay ends while the work queue is missing, naming the window; quorum ones say nothing', async () => {
    // Prepare
    const broker = testBroker();
    const [classicWork, quorumWork] = [uniqueName('classic-work'), uniqueName('quorum-work')];
    const classic = buildTopologyPlan(
      topologyOptions({ workQueue: classicWork, parkingQueue: `${classicWork}.parked`, queueType: 'classic', tierDelaysMs: [200, 800] }),
    );
    const quorum = buildTopologyPlan(topologyOptions({ workQueue: quorumWork, parkingQueue: `${quorumWork}.parked`, tierDelaysMs: [200] }));
    trackPlan(broker, classic);
    trackPlan(broker, quorum);
    // Act
    const applied = await applyTopology(broker.connection, classic);
    const verified = await verifyTopology(broker.connection, classic);
    const quorumApplied = await applyTopology(broker.connection, quorum);
    // Assess
    const work = classic.queues.find((q) => q.role === 'work')?.name;
    for (const report of [applied, verified]) {
      const warning = report.warnings.find((w) => w.queue === work);
      expect(warning?.message).toContain(`classic delay queues drop a retry whose delay ends while '${work}' is missing (up to 800 ms here`);
      expect(warning?.message).toContain('CRASH_LOOP_LIMIT cannot see a crash loop');
    }
    expect(quorumApplied.warnings.filter((w) => w.message.includes('classic'))).toEqual([]);
  });
});
