/**
 * `delayMode: 'native'` on the broker under test (AMQP_URL: 3.10 by default, 4.3 at :5674). On 4.3+
 * the plan is applied, verified, changed by hand and mended with the policy verify prints, and the
 * work queue it makes is shown to delay a `modified` settlement and dead-letter a park; before 4.3,
 * apply, verify and the CLI refuse, naming the version. The suite for the other version is skipped
 * by design: each broker proves its own half.
 */
import rhea from 'rhea';
import { afterEach, describe, expect, it } from 'vitest';
import { isNamedError, type UnsupportedBrokerError } from '../../shared/errors.js';
import { applyTopology } from '../../shared/topology/apply.js';
import { brokerVersionOf } from '../../shared/topology/broker-ops.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import { policyArgv } from '../../shared/topology/policy-fix.js';
import { listArgs, policyFromListing } from '../../shared/topology/rabbitmqctl-policies.js';
import type { PolicyReader, TopologyOptions, TopologyPlan } from '../../shared/topology/types.js';
import { verifyTopology } from '../../shared/topology/verify.js';
import { AMQP_URL, uniqueName } from '../helpers/broker.js';
import { BrokerCtl } from '../helpers/broker-ctl.js';
import { BROKER_VERSION, NATIVE_BROKER } from '../helpers/broker-version.js';
import { publishConfirmed, topologyOptions, trackPlan, useTestBroker } from '../helpers/topology.js';
import { callBoomerang } from '../helpers/boomerang-cli.js';

const version = BROKER_VERSION;
const canRunNative = NATIVE_BROKER;

const testBroker = useTestBroker();
const policiesSet: string[] = [];

/**
 * rabbitmqctl against the node under test: each call boots an Erlang VM (about 2.5 s on the 2-core
 * machine, several times that while the other test files run beside it), so a test makes as few as it can.
 */
const brokerCtl = BrokerCtl.forUrl();

afterEach(async () => {
  for (const name of policiesSet.splice(0)) await brokerCtl.ctl(['clear_policy', name]);
});

function nativeOptions(): TopologyOptions {
  const workQueue = uniqueName('native');
  return topologyOptions({
    workQueue,
    parkingQueue: `${workQueue}.parked`,
    delayMode: 'native',
    maxDelayMs: 60_000,
    native: { maxRetries: 3, crashLoopLimit: 10, minDelayMs: 900 },
  });
}

function trackedPlan(options: TopologyOptions): TopologyPlan {
  const plan = buildTopologyPlan({ ...options, brokerVersion: version });
  trackPlan(testBroker(), plan);
  return plan;
}

/** Reads policies with rabbitmqctl against the node under test, as `--rabbitmqctl` does. */
const readPolicy: PolicyReader = async (queue) => policyFromListing(await brokerCtl.ctl(listArgs('/')), queue);

/** A queue this test has just declared under a unique name: no policy applies to it (no rabbitmqctl run to say so). */
const noPolicyYet: PolicyReader = async () => undefined;

describe.runIf(canRunNative)(`native topology on RabbitMQ ${version}`, () => {
  it('apply makes the parking lot and the work queue, and verify finds them in order', async () => {
    // Prepare
    const plan = trackedPlan(nativeOptions());
    // Act
    const applied = await applyTopology(testBroker().connection, plan);
    const again = await applyTopology(testBroker().connection, plan);
    const verified = await verifyTopology(testBroker().connection, plan);
    // Assess
    expect(applied.items.map((i) => [i.kind, i.status])).toEqual([
      ['queue', 'created'],
      ['queue', 'created'],
    ]);
    expect(again.items.map((i) => i.status)).toEqual(['unchanged', 'unchanged']);
    expect(verified.ok).toBe(true);
    expect(verified.items.map((i) => [i.name, i.status])).toEqual(plan.queues.map((q) => [q.name, 'ok']));
    expect(verified.items[1]?.detail).toMatch(/^native settings in order/);
  });

  it('verify names every difference of a plain quorum work queue declared by hand, and says to declare it again (the pull function reads arguments, not policies)', async () => {
    // Prepare: the team's own plain quorum queue.
    const options = nativeOptions();
    const plan = trackedPlan(options);
    await testBroker().channel.assertQueue(options.workQueue, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 500 } });
    // Apply refuses the work queue (see below) but makes the parking lot.
    await applyTopology(testBroker().connection, plan).catch(() => undefined);
    // Act
    const report = await verifyTopology(testBroker().connection, plan, { readPolicy });
    // Assess
    const work = report.items.find((i) => i.name === options.workQueue);
    expect(report.ok).toBe(false);
    expect(work?.status).toBe('different');
    expect(work?.differences?.map((d) => [d.argument, d.actual])).toEqual([
      ['x-delayed-retry-type', undefined],
      ['x-delayed-retry-min', undefined],
      ['x-delayed-retry-max', undefined],
      ['x-dead-letter-exchange', undefined],
      ['x-dead-letter-routing-key', undefined],
      ['x-dead-letter-strategy', undefined],
      ['x-overflow', undefined],
      ['x-delivery-limit', '500'],
    ]);
    expect(report.warnings[0]?.fix).toBeUndefined();
    expect(report.warnings[0]?.message).toContain('delete it and run `boomerang topology apply`');
  });

  it('verify offers the policy that lowers the delivery limit of a native work queue declared with a higher one, and the policy mends it', async () => {
    // Prepare: every native argument, but a delivery limit of 500.
    const options = nativeOptions();
    const plan = trackedPlan(options);
    const spec = plan.queues.find((q) => q.role === 'work');
    await testBroker().channel.assertQueue(options.workQueue, { durable: true, arguments: { ...spec?.arguments, 'x-delivery-limit': 500 } });
    await applyTopology(testBroker().connection, plan).catch(() => undefined);
    // Act
    const before = await verifyTopology(testBroker().connection, plan, { readPolicy: noPolicyYet });
    const fix = before.warnings[0]?.fix;
    if (fix === undefined) throw new Error(`verify offered no policy: ${JSON.stringify(before.warnings)}`);
    policiesSet.push(fix.name);
    await brokerCtl.ctl(policyArgv(fix));
    const after = await verifyTopology(testBroker().connection, plan, { readPolicy });
    // Assess
    expect(before.items.find((i) => i.name === options.workQueue)?.differences?.map((d) => [d.argument, d.actual])).toEqual([['x-delivery-limit', '500']]);
    expect(after.ok, JSON.stringify(after.items)).toBe(true);
    expect(after.items.find((i) => i.name === options.workQueue)?.detail).toBe(`native settings in order (from its arguments and policy ${fix.name})`);
  });

  it('apply reports a work queue changed by hand as a mismatch, naming each argument, and creates the rest', async () => {
    // Prepare
    const options = nativeOptions();
    const plan = trackedPlan(options);
    await testBroker().channel.assertQueue(options.workQueue, {
      durable: true,
      arguments: { ...plan.queues[1]?.arguments, 'x-delayed-retry-min': 100, 'x-delayed-retry-type': 'all' },
    });
    // Act
    const error = await applyTopology(testBroker().connection, plan).catch((e: unknown) => e);
    // Assess
    expect(isNamedError(error, 'TopologyMismatchError')).toBe(true);
    expect((error as Error).message).toContain(
      `queue '${options.workQueue}' has x-delayed-retry-type = 'all' but the topology expects 'failed'; x-delayed-retry-min = '100' but the topology expects '900'`,
    );
    expect(await testBroker().exists('queue', options.parkingQueue)).toBe(true);
  });

  it('the work queue it makes holds a failed message until its delivery time, and dead-letters a park to the parking lot', async () => {
    // Prepare
    const options = nativeOptions();
    await applyTopology(testBroker().connection, trackedPlan(options));
    await publishConfirmed(testBroker().connection, { exchange: '', routingKey: options.workQueue, delayMs: 0 }, 'm');
    const { port, hostname } = new URL(AMQP_URL);
    const connection = rhea
      .create_container()
      .connect({ host: hostname, port: Number(port), hostname: 'vhost:/', username: 'guest', password: 'guest', reconnect: false });
    const arrivals: number[] = [];
    // Act: retry once 300 ms out (under the queue's min of 900: not clamped), then park.
    const parked = new Promise<void>((resolve) => {
      connection.open_receiver({ source: { address: `/queues/${options.workQueue}` }, autoaccept: false }).on('message', (ctx) => {
        arrivals.push(Date.now());
        if (arrivals.length === 1)
          ctx.delivery?.modified({ delivery_failed: true, undeliverable_here: false, message_annotations: { 'x-opt-delivery-time': Date.now() + 300 } });
        else {
          ctx.delivery?.modified({ delivery_failed: true, undeliverable_here: true });
          resolve();
        }
      });
    });
    await parked;
    connection.close();
    const [lot] = await testBroker().drain(options.parkingQueue, 1);
    // Assess
    const [first = 0, second = 0] = arrivals;
    expect(second - first).toBeGreaterThanOrEqual(300);
    expect(second - first).toBeLessThan(900);
    expect(lot?.content.toString()).toBe('m');
    expect((lot?.properties.headers?.['x-death'] as { reason: string }[] | undefined)?.[0]?.reason).toBe('rejected');
  });
});

describe.runIf(!canRunNative)(`native topology refused on RabbitMQ ${version}`, () => {
  it('apply and verify refuse before touching the broker, naming its version and the modes that work', async () => {
    // Prepare
    const options = nativeOptions();
    const plan = trackedPlan(options);
    // Act
    const refusals = await Promise.all(
      [applyTopology(testBroker().connection, plan), verifyTopology(testBroker().connection, plan)].map((p) =>
        p.then(
          () => undefined,
          (e: unknown) => e,
        ),
      ),
    );
    // Assess
    for (const refusal of refusals) {
      expect(isNamedError<UnsupportedBrokerError>(refusal, 'UnsupportedBrokerError')).toBe(true);
      expect((refusal as UnsupportedBrokerError).brokerVersion).toBe(brokerVersionOf(testBroker().connection));
      expect((refusal as Error).message).toBe(
        `RabbitMQ ${version} cannot delay a message natively (4.3 or later is needed): use delayMode 'tiers' or 'exact' (DELAY_MODE=tiers or exact)`,
      );
    }
    expect(await testBroker().exists('queue', options.workQueue)).toBe(false);
    expect(await testBroker().exists('queue', options.parkingQueue)).toBe(false);
  });

  it.each(['apply', 'verify'])('boomerang topology %s exits 1, naming the version', async (command) => {
    // Act
    const env = { PATH: process.env.PATH, LOG_LEVEL: 'silent', AMQP_URL, DELAY_MODE: 'native' };
    const run = await callBoomerang(['topology', command, '--work-queue', uniqueName('native')], { env });
    // Assess
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain(`UnsupportedBrokerError: RabbitMQ ${version} cannot delay a message natively`);
  });
});
