/**
 * The bundles the construct makes at synth, as Lambda gets them: a plain App and Stack with
 * `BoomerangQueues`, bundling on, then each function's asset folder (from the template's S3Key, in the
 * cloud assembly) imported by plain `node` and run against RabbitMQ.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BoomerangQueues } from '../../shared/cdk/index.js';
import { uniqueName } from '../helpers/broker.js';
import { functionEnv, invokeBundle, runBundle, startPartner } from '../helpers/bundle-run.js';
import { publishJson, setUpTopology, testConfig } from '../helpers/engine.js';
import { useTestBroker } from '../helpers/topology.js';
import { tempFunctionsDir, writeQueueFile } from '../fixtures/queue-files.js';

/** A limit, not a measurement: the definitions' child process and three esbuild bundles on a loaded 2-core machine. */
const SYNTH_TIMEOUT_MS = 180_000;

const testBroker = useTestBroker();
let outdir: string;
let removeFixture: () => void = () => undefined;
let queues: BoomerangQueues;
/** Each function's asset folder in the cloud assembly, by function name. */
let assets: Map<string, string>;

beforeAll(async () => {
  outdir = await mkdtemp(join(tmpdir(), 'boomerang-cdk-bundles-'));
  const fixture = tempFunctionsDir();
  removeFixture = fixture.remove;
  // The webhook delivery on the queue WORK_QUEUE names at import, both modes.
  writeQueueFile(fixture.dir, { template: 'webhooks-env', name: 'cdk-webhooks', workQueue: 'cdk-bundles.unset' });
  const app = new App({ outdir });
  const stack = new Stack(app, 'Bundled');
  queues = new BoomerangQueues(stack, 'Queues', {
    files: [join(fixture.dir, 'cdk-webhooks.ts')],
    brokerSecret: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/broker-AbCdEf',
    brokerHost: 'b-1.mq.eu-west-1.amazonaws.com',
    brokerArn: 'arn:aws:mq:eu-west-1:123456789012:broker:bundled:b-1',
  });
  const assembly = app.synth();
  const template = JSON.parse(await readFile(join(assembly.directory, stack.templateFile), 'utf8')) as {
    Resources: Record<string, { Type: string; Properties: { FunctionName?: string; Code?: { S3Key?: string } } }>;
  };
  assets = new Map(
    Object.values(template.Resources)
      .filter((r) => r.Type === 'AWS::Lambda::Function')
      .map((r) => [r.Properties.FunctionName as string, join(assembly.directory, `asset.${r.Properties.Code?.S3Key?.replace(/\.zip$/, '')}`)]),
  );
}, SYNTH_TIMEOUT_MS);

afterAll(async () => {
  removeFixture();
  await rm(outdir, { recursive: true, force: true });
});

describe('Class: BoomerangQueues, its bundles', () => {
  it('bundles each function into its own asset: index.mjs exporting handler, its chunks, source maps and licences, the AWS SDK left out', async () => {
    // Assess
    expect([...assets.keys()].sort()).toEqual(['Bundled-cdk-webhooks-event', 'Bundled-cdk-webhooks-pull', 'Bundled-cdk-webhooks-topology', 'Bundled-operator']);
    expect(queues.bundles.map((b) => b.name).sort()).toEqual(['cdk-webhooks-event', 'cdk-webhooks-pull', 'cdk-webhooks-topology', 'operator']);
    for (const [name, folder] of assets) {
      const files = readdirSync(folder);
      expect(files, name).toEqual(expect.arrayContaining(['index.mjs', 'index.mjs.map', 'index.mjs.LEGAL.txt', 'chunks']));
      const index = await readFile(join(folder, 'index.mjs'), 'utf8');
      // Code splitting: the SDK clients sit in chunks loaded at their first use, not in index.mjs.
      expect(index).not.toContain('@aws-sdk/');
      expect(readdirSync(join(folder, 'chunks')).some((chunk) => chunk.startsWith('powertools-secrets-'))).toBe(true);
      const report = queues.bundles.find((b) => `Bundled-${b.name}` === name);
      expect(report?.bytes).toBe(Buffer.byteLength(index));
      // What esbuild wrote was moved into the assembly: nothing is left where it was written.
      expect(existsSync(report?.file as string)).toBe(false);
    }
  });

  it('pull: the asset acks, retries and parks on the local broker', async () => {
    // Prepare: a partner that answers 200 on /ok and 503 on /down
    const broker = testBroker();
    const config = testConfig({ WORK_QUEUE: uniqueName('cdk-bundle-pull') });
    await setUpTopology(broker, config);
    const partner = await startPartner();
    try {
      publishJson(broker, config.workQueue, { url: `${partner.url}/ok` }, { messageId: 'ok' });
      publishJson(broker, config.workQueue, { url: `${partner.url}/down` }, { messageId: 'down' });
      publishJson(broker, config.workQueue, 'not a webhook message', { messageId: 'bad' });
      // Act
      const summary = await invokeBundle(join(assets.get('Bundled-cdk-webhooks-pull') as string, 'index.mjs'), {}, functionEnv(config.workQueue));
      // Assess
      expect(summary).toMatchObject({ received: 3, acked: 1, retried: 1, parked: 1, lost: 0 });
      const [parked] = await broker.drain(config.parkingQueue, 1);
      expect(parked?.properties.messageId).toBe('bad');
    } finally {
      partner.server.close();
    }
  });

  it("operator: the asset serves the declared queue's parking lot (describe, a page of list, the console's groups and depths) on the local broker", async () => {
    // Prepare: one parked message
    const broker = testBroker();
    const config = testConfig({ WORK_QUEUE: uniqueName('cdk-bundle-operator') });
    await setUpTopology(broker, config);
    publishJson(broker, config.parkingQueue, { url: 'http://partner.invalid/' }, { messageId: 'parked-1' });
    await broker.holds(config.parkingQueue, 1);
    const operator = join(assets.get('Bundled-operator') as string, 'index.mjs');
    // Act
    const described = await runBundle(operator, { op: 'describe' }, functionEnv(config.workQueue));
    const listed = await runBundle(
      operator,
      { op: 'list', options: { filter: { errorNames: [], headers: [] }, json: true }, nowMs: Date.now(), page: { offset: 0, bytes: 65_536 } },
      functionEnv(config.workQueue),
    );
    const grouped = await runBundle(
      operator,
      { op: 'console', parkingQueue: config.parkingQueue, command: { kind: 'groups', nowMs: Date.now() }, page: { offset: 0, bytes: 65_536 } },
      functionEnv(config.workQueue),
    );
    const depths = await runBundle(operator, { op: 'depths', queues: [config.workQueue, config.parkingQueue] }, functionEnv(config.workQueue));
    // Assess
    expect(described.stderr).toBe('');
    expect(JSON.parse(described.stdout)).toEqual({ queue: config.parkingQueue, workQueue: config.workQueue, retryHeader: config.retryHeader });
    const page = JSON.parse(listed.stdout) as { page: { base64: string }; matched: number };
    expect(page.matched).toBe(1);
    expect(JSON.parse(Buffer.from(page.page.base64, 'base64').toString('utf8'))).toMatchObject({ messageId: 'parked-1' });
    const groups = JSON.parse(Buffer.from((JSON.parse(grouped.stdout) as { page: { base64: string } }).page.base64, 'base64').toString('utf8')) as {
      total: number;
      groups: { count: number }[];
    };
    expect([groups.total, groups.groups.map((g) => g.count)]).toEqual([1, [1]]);
    expect(JSON.parse(depths.stdout)).toEqual({
      depths: [
        [config.workQueue, 0],
        [config.parkingQueue, 1],
      ],
    });
    expect(await broker.messageCount(config.parkingQueue)).toBe(1);
  });
});
