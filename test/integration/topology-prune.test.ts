/**
 * `boomerang topology prune` on the broker: a dry run deletes nothing; with --yes an empty delay queue
 * and an old marker the plan no longer needs are deleted, a delay queue holding a message is kept, and
 * what the plan still needs is never touched. The binary runs as a team runs it.
 */
import { describe, expect, it } from 'vitest';
import { namesFromListing } from '../../shared/topology/rabbitmqctl-names.js';
import { applyTopology } from '../../shared/topology/apply.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import { AMQP_URL, uniqueName } from '../helpers/broker.js';
import { BrokerCtl } from '../helpers/broker-ctl.js';
import { callBoomerang } from '../helpers/boomerang-cli.js';
import { topologyOptions, trackPlan, useTestBroker } from '../helpers/topology.js';

const testBroker = useTestBroker();

/** rabbitmqctl boots a VM: one took 17 s on 4.3.6 on the busy 2-core machine. A limit, not a measurement. */
const CTL_TEST_TIMEOUT_MS = 120_000;

/** The env of a work queue configured by the environment alone: tiers 500 and 1000 ms. */
function envFor(workQueue: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    LOG_LEVEL: 'silent',
    AMQP_URL,
    WORK_QUEUE: workQueue,
    BACKOFF_INITIAL_MS: '500',
    BACKOFF_MAX_MS: '1000',
    BACKOFF_JITTER: '0',
  };
}

/** The work queue's current plan applied, and what an older plan left: an empty tier, a tier holding a message, an old marker. */
async function leftovers() {
  const workQueue = uniqueName('prune');
  const broker = testBroker();
  const plan = buildTopologyPlan(topologyOptions({ workQueue, parkingQueue: `${workQueue}.parked`, tierDelaysMs: [500, 1000] }));
  trackPlan(broker, plan);
  await applyTopology(broker.connection, plan);
  const empty = `${workQueue}.delay.2000ms`;
  const holding = `${workQueue}.delay.4000ms`;
  const marker = `${workQueue}.delay-path.0123456789abcdef`;
  broker.trackQueue(empty, holding);
  broker.trackExchange(marker);
  const ch = await broker.connection.createConfirmChannel();
  for (const queue of [empty, holding]) await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await ch.assertExchange(marker, 'fanout', { durable: true });
  ch.sendToQueue(holding, Buffer.from('{"kept":true}'));
  await ch.waitForConfirms();
  await ch.close();
  return { workQueue, empty, holding, marker, needed: `${workQueue}.delay.500ms` };
}

describe('boomerang topology prune', () => {
  it('a dry run lists what it would delete and deletes nothing', async () => {
    // Prepare
    const { workQueue, empty, holding, marker, needed } = await leftovers();
    // Act
    const run = await callBoomerang(['topology', 'prune', '--work-queue', workQueue, '--name', empty, '--name', holding, '--name', marker, '--name', needed], {
      env: envFor(workQueue),
    });
    // Assess
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`queue ${empty}: empty: would be deleted (add --yes)`);
    expect(run.stdout).toContain(`queue ${holding}: kept: it holds 1 message(s)`);
    expect(run.stdout).toContain(`exchange ${marker}: a marker (holds no message): would be deleted (add --yes)`);
    expect(run.stdout).toContain(`name ${needed}: left alone: the current plan needs it`);
    expect(run.stdout).toContain('dry run');
    for (const queue of [empty, holding, needed]) expect(await testBroker().exists('queue', queue), queue).toBe(true);
    expect(await testBroker().exists('exchange', marker)).toBe(true);
  });

  it('with --yes deletes the empty delay queue and the old marker, keeps the one holding a message and what the plan needs', async () => {
    // Prepare
    const { workQueue, empty, holding, marker, needed } = await leftovers();
    // Act
    const run = await callBoomerang(
      ['topology', 'prune', '--work-queue', workQueue, '--name', empty, '--name', holding, '--name', marker, '--name', needed, '--name', workQueue, '--yes'],
      { env: envFor(workQueue) },
    );
    // Assess
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`queue ${empty}: deleted (it was empty)`);
    expect(run.stdout).toContain(`exchange ${marker}: deleted (a marker, unused)`);
    expect(run.stdout).toContain('2 deleted');
    expect(await testBroker().exists('queue', empty)).toBe(false);
    expect(await testBroker().exists('exchange', marker)).toBe(false);
    expect(await testBroker().messageCount(holding)).toBe(1);
    for (const queue of [needed, workQueue, `${workQueue}.parked`]) expect(await testBroker().exists('queue', queue), queue).toBe(true);
  });

  it('exits 2 naming the flags when it has no names to look at', async () => {
    // Act
    const run = await callBoomerang(['topology', 'prune', '--work-queue', 'orders'], { env: envFor('orders') });
    // Assess
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('prune needs names: --name <queue or exchange>');
  });

  it(
    "finds the candidates in rabbitmqctl's listing of the vhost, as --rabbitmqctl does",
    async () => {
      // Prepare
      const { empty, marker } = await leftovers();
      // Act
      const ctl = BrokerCtl.forUrl();
      const listed = [
        ...namesFromListing(await ctl.ctl(['list_queues', '--quiet', '--vhost', '/', '--formatter', 'json', 'name'])),
        ...namesFromListing(await ctl.ctl(['list_exchanges', '--quiet', '--vhost', '/', '--formatter', 'json', 'name'])),
      ];
      // Assess
      expect(listed).toEqual(expect.arrayContaining([empty, marker]));
    },
    CTL_TEST_TIMEOUT_MS,
  );
});
