/**
 * `boomerang publish` and `boomerang invoke event --sample` (issue 33, item 4), as a team runs them on
 * its own declared queue: what publish sends is what the queue holds, byte for byte; a queue that
 * does not exist is said; a sample event is handled by the queue's own handler. Runs on 3.10, 4.0 and 4.3.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { topologyOptionsFromConfig } from '../../shared/config/config.js';
import { loadDeclaredQueues } from '../../shared/queues/declared-queues.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import { type CliRun, callBoomerang } from '../helpers/boomerang-cli.js';
import { lastJsonLine } from '../helpers/invoke-child.js';
import { AMQP_URL, uniqueName } from '../helpers/broker.js';
import { trackPlan, useTestBroker } from '../helpers/topology.js';
import { tempFunctionsDir, writeQueueFile } from '../fixtures/queue-files.js';
import { applyTopology } from '../../shared/topology/apply.js';

const testBroker = useTestBroker();
const workQueue = uniqueName('publish-orders');
let functions: ReturnType<typeof tempFunctionsDir>;

function boomerang(args: string[]): Promise<CliRun> {
  return callBoomerang([...args, '--functions-dir', functions.dir], { env: { PATH: process.env.PATH, AMQP_URL, LOG_LEVEL: 'silent' } });
}

beforeAll(() => {
  functions = tempFunctionsDir();
  writeQueueFile(functions.dir, { template: 'orders', name: 'orders', workQueue });
});
afterAll(() => functions.remove());

/** Each test its own topology: the test broker deletes what a test made once it ends. */
beforeEach(async () => {
  const [queue] = await loadDeclaredQueues({ dir: functions.dir, env: {} });
  const plan = buildTopologyPlan(topologyOptionsFromConfig((queue as NonNullable<typeof queue>).loadConfig({ AMQP_URL }, 'pull')));
  trackPlan(testBroker(), plan);
  await applyTopology(testBroker().connection, plan);
});

describe('boomerang publish', () => {
  it("sends a file's bytes exactly, with the headers, properties and count asked, each confirmed, to the one declared queue", async () => {
    // Prepare: every byte value, so nothing may be decoded or re-encoded on the way
    const body = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const file = join(functions.dir, 'body.bin');
    writeFileSync(file, body);
    // Act
    const run = await boomerang([
      'publish',
      '--body-file',
      file,
      '--header',
      'tenant=acme',
      '--property',
      'type=order',
      '--property',
      'priority=3',
      '--count',
      '3',
    ]);
    // Assess
    expect(run.code, run.stderr).toBe(0);
    const summary = lastJsonLine(run.stdout);
    expect(summary).toMatchObject({ queue: workQueue, confirmed: 3, returned: 0, refused: 0 });
    const messages = await testBroker().drain(workQueue, 3);
    expect(messages.map((m) => m.properties.messageId)).toEqual(summary?.messageIds);
    for (const m of messages) {
      expect(m.content.equals(body)).toBe(true);
      expect(m.properties).toMatchObject({ type: 'order', priority: 3, deliveryMode: 2, headers: { tenant: 'acme' } });
      expect(m.properties.contentType).toBeUndefined();
    }
  });

  it('sends an inline JSON body as application/json', async () => {
    // Act
    const run = await boomerang(['publish', '--function', 'orders', '--body', '{"id":"o-1","outcome":"ok"}']);
    // Assess
    expect(run.code, run.stderr).toBe(0);
    const [message] = await testBroker().drain(workQueue, 1);
    expect(message?.content.toString()).toBe('{"id":"o-1","outcome":"ok"}');
    expect(message?.properties.contentType).toBe('application/json');
  });

  it('says so, and exits 1, when no queue of that name exists', async () => {
    // Act
    const run = await callBoomerang(['publish', '--work-queue', uniqueName('nowhere'), '--body', 'x'], {
      env: { PATH: process.env.PATH, AMQP_URL, LOG_LEVEL: 'silent' },
    });
    // Assess
    expect(run.code).toBe(1);
    expect(lastJsonLine(run.stdout)).toMatchObject({ confirmed: 0, returned: 1 });
    expect(run.stderr).toContain('came back unroutable');
  });
});

describe('boomerang invoke event --sample', () => {
  it("runs the queue's event function on an event made for its work queue", async () => {
    // Act: the orders handler acks "ok" and parks "invalid"
    const ok = await boomerang(['invoke', 'event', '--sample', '--body', '{"id":"s","outcome":"ok"}', '--count', '2', '--budget-ms', '5000']);
    const invalid = await boomerang(['invoke', 'event', '--sample', '--body', '{"id":"s","outcome":"invalid"}', '--budget-ms', '5000']);
    // Assess
    expect(ok.code, ok.stderr).toBe(0);
    expect(lastJsonLine(ok.stdout)).toMatchObject({ received: 2, acked: 2 });
    expect(invalid.code, invalid.stderr).toBe(0);
    expect(lastJsonLine(invalid.stdout)).toMatchObject({ received: 1, parked: 1 });
    const [parked] = await testBroker().drain(`${workQueue}.parked`, 1);
    expect(parked?.content.toString()).toBe('{"id":"s","outcome":"invalid"}');
  });
});
