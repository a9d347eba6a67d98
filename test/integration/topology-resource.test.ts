/**
 * The topology custom resource's handler (shared/topology/topology-resource.ts) with CloudFormation's
 * own request shapes, against the real broker, answering a local HTTP server that stands for the
 * ResponseURL: Create makes the queues; an Update that meets a differing queue fails naming it and
 * changes nothing; an Update that drops a tier reports it and deletes nothing; Delete deletes nothing.
 */
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topologyOptionsFromConfig } from '../../shared/config/config.js';
import { silentLogger } from '../helpers/fakes.js';
import { defineQueue } from '../../shared/queues/define-queue.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import { planSummary } from '../../shared/topology/plan-summary.js';
import type { TopologyResourceProperties } from '../../shared/topology/resource-work.js';
import { createTopologyResource } from '../../shared/topology/topology-resource.js';
import { AMQP_URL, uniqueName } from '../helpers/broker.js';
import { cloudFormationEvent, type ResponseServer, startResponseServer } from '../helpers/cloudformation.js';
import { useTestBroker } from '../helpers/topology.js';

const testBroker = useTestBroker();
let server: ResponseServer;

beforeAll(async () => {
  server = await startResponseServer();
});
afterAll(async () => {
  await server.close();
});

/** A declared queue on a unique work queue whose delays go from 500 ms to `maxDelayMs` (tiers 500, 1000 by default; no jitter). */
function declaredQueue(workQueue = uniqueName('resource'), maxDelayMs = 1000) {
  const { queue } = defineQueue({
    name: 'orders',
    workQueue,
    handler: async () => undefined,
    retry: { maxRetries: 3, initialDelayMs: 500, maxDelayMs, jitter: 0 },
  });
  return queue;
}

/** The properties the construct writes for `queue`, and its plan's entities tracked for deletion after the test. */
function propertiesOf(queue: ReturnType<typeof declaredQueue>): TopologyResourceProperties {
  const summary = planSummary(buildTopologyPlan(topologyOptionsFromConfig(queue.loadConfig({ AMQP_URL }))));
  for (const entity of summary.entities) {
    const [kind, name] = [entity.slice(0, entity.indexOf(' ')), entity.slice(entity.indexOf(' ') + 1)];
    if (kind === 'queue') testBroker().trackQueue(name);
    else testBroker().trackExchange(name);
  }
  return { Queue: queue.name, WorkQueue: queue.workQueue, VirtualHost: '/', Entities: summary.entities, PlanDigest: summary.digest };
}

function handlerFor(queue: ReturnType<typeof declaredQueue>, env: Record<string, string> = { AMQP_URL }) {
  return createTopologyResource(queue, { env, log: silentLogger });
}

/** The last response the server received. */
function lastResponse() {
  const response = server.responses.at(-1);
  if (response === undefined) throw new Error('the handler sent no response');
  return response;
}

describe('createTopologyResource, with CloudFormation requests', () => {
  it('Create: declares the queue, its parking lot, its delay queues and its marker, and answers SUCCESS with a stable physical id', async () => {
    // Prepare
    const queue = declaredQueue();
    const properties = propertiesOf(queue);
    const event = cloudFormationEvent('Create', server.url, properties);
    // Act
    await handlerFor(queue)(event, { getRemainingTimeInMillis: () => 120_000 });
    // Assess
    const { method, contentType, body } = lastResponse();
    expect([method, contentType]).toEqual(['PUT', '']);
    expect(body).toMatchObject({
      Status: 'SUCCESS',
      PhysicalResourceId: `${queue.workQueue}@/`,
      StackId: event.StackId,
      RequestId: event.RequestId,
      LogicalResourceId: event.LogicalResourceId,
      NoEcho: false,
    });
    expect(body.Reason).toMatch(/^Topology of orders applied on RabbitMQ \d+\.\d+\.\d+: 6 created, 0 already in place, 0 bindings\.$/);
    for (const entity of properties.Entities) {
      const [kind, name] = entity.split(' ') as ['queue' | 'exchange', string];
      expect(await testBroker().exists(kind, name), entity).toBe(true);
    }
  });

  it('Update meeting a queue whose arguments differ: FAILED, naming the argument and what to run, and the queue left as it was', async () => {
    // Prepare: the 500 ms delay queue already exists with another TTL
    const queue = declaredQueue();
    const properties = propertiesOf(queue);
    const delayQueue = `${queue.workQueue}.delay.500ms`;
    const ch = await testBroker().connection.createChannel();
    await ch.assertQueue(delayQueue, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-message-ttl': 999 } });
    await ch.close();
    const event = cloudFormationEvent('Update', server.url, properties, { physicalResourceId: `${queue.workQueue}@/`, oldProperties: properties });
    // Act
    const outcome = await handlerFor(queue)(event, { getRemainingTimeInMillis: () => 120_000 });
    // Assess
    const { body } = lastResponse();
    expect(body.Status).toBe('FAILED');
    expect(body.PhysicalResourceId).toBe(`${queue.workQueue}@/`);
    expect(body.Reason).toContain(`queue '${delayQueue}': `);
    expect(body.Reason).toContain("x-message-ttl is '999', the plan wants '500'");
    expect(body.Reason).toContain(`empty: delete it (rabbitmqctl delete_queue '${delayQueue}')`);
    expect(body.Reason).toContain('nothing was changed');
    expect(outcome.status).toBe('FAILED');
    // The queue keeps its TTL: declaring it with 999 again is accepted
    const check = await testBroker().connection.createChannel();
    await expect(check.assertQueue(delayQueue, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-message-ttl': 999 } })).resolves.toMatchObject({
      queue: delayQueue,
    });
    await check.close();
  });

  it('Update to a plan with one tier fewer: SUCCESS, the dropped delay queue and marker reported, and kept', async () => {
    // Prepare: created with delays up to 2000 ms (tiers 500, 1000, 2000), then updated to 1000 ms
    const workQueue = uniqueName('resource');
    const before = declaredQueue(workQueue, 2000);
    const old = propertiesOf(before);
    await handlerFor(before)(cloudFormationEvent('Create', server.url, old), { getRemainingTimeInMillis: () => 120_000 });
    const after = declaredQueue(workQueue, 1000);
    const properties = propertiesOf(after);
    // Act
    await handlerFor(after)(cloudFormationEvent('Update', server.url, properties, { physicalResourceId: `${workQueue}@/`, oldProperties: old }), {
      getRemainingTimeInMillis: () => 120_000,
    });
    // Assess
    const { body } = lastResponse();
    expect(body.Status).toBe('SUCCESS');
    const dropped = body.Data.NoLongerNeeded?.split(',') ?? [];
    expect(dropped[0]).toBe(`${workQueue}.delay.2000ms`);
    expect(dropped[1]).toMatch(new RegExp(`^${workQueue.replace(/[.]/g, '\\.')}\\.delay-path\\.[0-9a-f]{16}$`));
    expect(body.Reason).toContain(`\`boomerang topology prune --function orders --name ${dropped[0]} --name ${dropped[1]}\``);
    expect(await testBroker().exists('queue', `${workQueue}.delay.2000ms`)).toBe(true);
    expect(await testBroker().exists('exchange', dropped[1] as string)).toBe(true);
  });

  it('Delete: SUCCESS, every queue kept with its messages, and the counts reported', async () => {
    // Prepare
    const queue = declaredQueue();
    const properties = propertiesOf(queue);
    await handlerFor(queue)(cloudFormationEvent('Create', server.url, properties), { getRemainingTimeInMillis: () => 120_000 });
    const ch = await testBroker().connection.createConfirmChannel();
    ch.sendToQueue(queue.workQueue, Buffer.from('{"order":1}'));
    await ch.waitForConfirms();
    await ch.close();
    // Act
    await handlerFor(queue)(cloudFormationEvent('Delete', server.url, properties, { physicalResourceId: `${queue.workQueue}@/` }), {
      getRemainingTimeInMillis: () => 120_000,
    });
    // Assess
    const { body } = lastResponse();
    expect(body).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: `${queue.workQueue}@/` });
    expect(body.Reason).toContain(`${queue.workQueue} (1 messages)`);
    expect(body.Reason).toMatch(/^Nothing deleted/);
    for (const entity of properties.Entities) {
      const [kind, name] = entity.split(' ') as ['queue' | 'exchange', string];
      expect(await testBroker().exists(kind, name), entity).toBe(true);
    }
    expect(await testBroker().messageCount(queue.workQueue)).toBe(1);
  });

  it('answers FAILED, and does not hang, when the broker refuses the connection; Delete answers SUCCESS even then', async () => {
    // Prepare: nothing listens on port 1
    const queue = declaredQueue();
    const properties = { ...propertiesOf(queue) };
    const handler = handlerFor(queue, { AMQP_URL: 'amqp://guest:guest@127.0.0.1:1', CONNECT_TIMEOUT_MS: '1000' });
    // Act
    await handler(cloudFormationEvent('Create', server.url, properties), { getRemainingTimeInMillis: () => 120_000 });
    const created = lastResponse().body;
    await handler(cloudFormationEvent('Delete', server.url, properties, { physicalResourceId: `${queue.workQueue}@/` }), {
      getRemainingTimeInMillis: () => 120_000,
    });
    const deleted = lastResponse().body;
    // Assess
    expect(created.Status).toBe('FAILED');
    expect(created.Reason).toMatch(/^Create of the topology of orders: \w+: .+ Nothing was deleted; deploy again once the cause is fixed\.$/s);
    expect(deleted.Status).toBe('SUCCESS');
    expect(deleted.Reason).toMatch(/^Nothing deleted: .*\(counts not read: /s);
    expect(await testBroker().exists('queue', queue.workQueue)).toBe(false);
  });

  it('answers FAILED before the Lambda timeout when the broker accepts the connection and never speaks', async () => {
    // Prepare: a server that takes the TCP connection and says nothing; 16 s left leaves the work 1 s (15 s are kept for the answer)
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const queue = declaredQueue();
    const handler = handlerFor(queue, { AMQP_URL: `amqp://guest:guest@127.0.0.1:${port}`, CONNECT_TIMEOUT_MS: '120000' });
    try {
      // Act
      const started = Date.now();
      await handler(cloudFormationEvent('Create', server.url, propertiesOf(queue)), { getRemainingTimeInMillis: () => 16_000 - (Date.now() - started) });
      // Assess
      const { body } = lastResponse();
      expect(body.Status).toBe('FAILED');
      expect(body.Reason).toContain('the work did not finish within 1 s');
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it("answers a rollback's Update (old properties, new code) with SUCCESS and applies nothing", async () => {
    // Prepare: the code's plan has 3 tiers (the failed update's); the properties being restored name a 2-tier plan
    const workQueue = uniqueName('resource');
    const code = declaredQueue(workQueue, 2000);
    const failedUpdate = propertiesOf(code);
    const restored = propertiesOf(declaredQueue(workQueue, 1000));
    // Act
    await handlerFor(code)(cloudFormationEvent('Update', server.url, restored, { physicalResourceId: `${workQueue}@/`, oldProperties: failedUpdate }), {
      getRemainingTimeInMillis: () => 120_000,
    });
    // Assess
    const { body } = lastResponse();
    expect(body.Status).toBe('SUCCESS');
    expect(body.Reason).toMatch(/^Rollback of orders: nothing applied, nothing deleted/);
    expect(await testBroker().exists('queue', workQueue)).toBe(false);
  });
});
