import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tierQueueName } from '../../shared/topology/tiers.js';
import type { Bundle } from '../../shared/cdk/bundle-report.js';
import { buildBundles, functionEntries } from '../../shared/cdk/bundles.js';
import { loadDeclaredQueues } from '../../shared/queues/declared-queues.js';
import { tempFunctionsDir, writeQueueFile } from '../fixtures/queue-files.js';
import { agedLot } from '../helpers/aged-lot.js';
import { AMQP_URL, uniqueName } from '../helpers/broker.js';
import { BROKER_VERSION, NATIVE_BROKER } from '../helpers/broker-version.js';
import { functionEnv, invokeBundle, runBundle, startPartner } from '../helpers/bundle-run.js';
import { publishJson, setUpTopology, testConfig } from '../helpers/engine.js';
import { useTestBroker } from '../helpers/topology.js';
import { eventFor, fixtureMessages } from '../fixtures/events.js';

const testBroker = useTestBroker();
let outdir: string;
let bundles: Bundle[];
let removeFixture: () => void = () => undefined;
let fixtureDir: string;
/** The fixture's native queue (its code sets `delayMode: 'native'`), its own work queue per run. */
const nativeWorkQueue = uniqueName('bundle-native');

/** The bundle of the fixture queue (the webhook delivery on the queue WORK_QUEUE names) for one mode. */
const fixtureBundle = (mode: 'pull' | 'event'): string => join(outdir, `bundle-webhooks-${mode}`, 'index.mjs');

/** The lines of `text` that are JSON objects (a crash's stack trace is not). */
function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

beforeAll(async () => {
  outdir = await mkdtemp(join(tmpdir(), 'boomerang-bundle-'));
  const fixture = tempFunctionsDir();
  removeFixture = fixture.remove;
  fixtureDir = fixture.dir;
  writeQueueFile(fixture.dir, { template: 'webhooks-env', name: 'bundle-webhooks', workQueue: 'bundle-test.unset' });
  writeQueueFile(fixture.dir, { template: 'orders-native', name: 'bundle-native', workQueue: nativeWorkQueue });
  const entries = [...functionEntries(await loadDeclaredQueues({ env: {} })), ...functionEntries(await loadDeclaredQueues({ dir: fixture.dir }))];
  bundles = await buildBundles({ outdir, entries });
}, 120_000);

afterAll(async () => {
  removeFixture();
  await rm(outdir, { recursive: true, force: true });
});

describe('the Lambda bundles', () => {
  it('are built per deployed function of each declared queue, from its entry', () => {
    expect(bundles.map((b) => b.name).sort()).toEqual([
      'bundle-native-pull',
      'bundle-webhooks-event',
      'bundle-webhooks-pull',
      'partner-sync-event',
      'partner-sync-pull',
      'partner-sync-retention',
      'webhooks-event',
      'webhooks-pull',
    ]);
  });

  it("holds each mode's own engine only: no event code in a pull bundle, no pull or native code in an event bundle, and the delay path the queue's code sets", async () => {
    // Prepare: the modules each bundle was made from, in its source maps (index.mjs and every chunk)
    const sourcesOf = async (name: string): Promise<string[]> => {
      const dir = join(outdir, name);
      const maps = [join(dir, 'index.mjs.map'), ...(await readdir(join(dir, 'chunks'))).filter((f) => f.endsWith('.map')).map((f) => join(dir, 'chunks', f))];
      const sources = await Promise.all(maps.map(async (map) => (JSON.parse(await readFile(map, 'utf8')) as { sources: string[] }).sources));
      return sources.flat();
    };
    // Act: webhooks sets delayMode 'tiers' in its code; bundle-webhooks leaves it to DELAY_MODE
    const [pull, anyPull, event] = await Promise.all([sourcesOf('webhooks-pull'), sourcesOf('bundle-webhooks-pull'), sourcesOf('webhooks-event')]);
    // Assess
    const has = (sources: string[], module: string): boolean => sources.some((s) => s.endsWith(`shared/${module}`));
    expect([
      has(pull, 'pull/pull-function.ts'),
      has(pull, 'pull/pull.ts'),
      has(pull, 'native/native-pull.ts'),
      has(pull, 'event/event-function.ts'),
      has(pull, 'event/run-event.ts'),
    ]).toEqual([true, true, false, false, false]);
    expect([has(anyPull, 'pull/pull.ts'), has(anyPull, 'native/native-pull.ts')]).toEqual([true, true]);
    expect([
      has(event, 'event/event-function.ts'),
      has(event, 'pull/pull-function.ts'),
      has(event, 'pull/pull.ts'),
      has(event, 'native/native-pull.ts'),
    ]).toEqual([true, false, false, false]);
  });

  it.each(['webhooks-pull', 'webhooks-event', 'bundle-native-pull', 'partner-sync-retention'])(
    '%s is one file at a cold start, and holds each module once: the chunks loaded on first use take what they share from index.mjs',
    async (name) => {
      // Prepare
      const dir = join(outdir, name);
      const chunkFiles = (await readdir(join(dir, 'chunks')).catch(() => [] as string[])).filter((f) => f.endsWith('.mjs'));
      const staticImports = (code: string): string[] =>
        [...code.matchAll(/(?:^|[;\n])(?:import|export)\s*(?:\{[^}]*\}|\*(?:\s*as\s*\w+)?)?\s*(?:from)?\s*"(\.\.?\/[^"]+)"/g)].map((m) => m[1] as string);
      // Act
      const index = await readFile(join(dir, 'index.mjs'), 'utf8');
      const chunks = await Promise.all(chunkFiles.map(async (f) => ({ file: f, code: await readFile(join(dir, 'chunks', f), 'utf8') })));
      const maps = [join(dir, 'index.mjs.map'), ...chunkFiles.map((f) => join(dir, 'chunks', `${f}.map`))];
      const sources = (
        await Promise.all(maps.map(async (map) => (JSON.parse(await readFile(map, 'utf8')) as { sources: string[] }).sources.map((s) => join(map, '..', s))))
      ).flat();
      // Assess: index.mjs imports no file of its own at its start; every static import of a chunk names a file that is there
      expect(staticImports(index)).toEqual([]);
      for (const { file, code } of chunks)
        for (const imported of staticImports(code))
          expect([...chunkFiles.map((f) => `./${f}`), '../index.mjs'], `${file} imports ${imported}`).toContain(imported);
      expect(sources.length).toBeGreaterThan(10);
      expect(sources.filter((source, i) => sources.indexOf(source) !== i)).toEqual([]);
    },
  );

  it("leaves a native queue's pull bundle without the copy path: nothing it loads at its start holds amqplib", async () => {
    // Prepare: the modules of index.mjs and of the chunks it imports statically, from their source maps
    const dir = join(outdir, 'bundle-native-pull');
    const staticFiles = async (file: string, seen = new Set<string>()): Promise<Set<string>> => {
      if (seen.has(file)) return seen;
      seen.add(file);
      const text = await readFile(file, 'utf8');
      for (const [, chunk] of text.matchAll(/(?:^|[;\n])import(?:\{[^}]*\}|\*\s*as\s*\w+)?(?:from)?"(\.\.?\/chunks\/[^"]+)"/g))
        await staticFiles(join(file, '..', chunk as string), seen);
      return seen;
    };
    const sourcesOf = async (files: Iterable<string>): Promise<string[]> =>
      (await Promise.all([...files].map(async (f) => (JSON.parse(await readFile(`${f}.map`, 'utf8')) as { sources: string[] }).sources))).flat();
    // Act
    const atStart = await sourcesOf(await staticFiles(join(dir, 'index.mjs')));
    const everyChunk = await sourcesOf((await readdir(join(dir, 'chunks'))).filter((f) => f.endsWith('.mjs')).map((f) => join(dir, 'chunks', f)));
    // Assess: the native engine at the start; amqplib only in a chunk loaded on a rare path (an older broker's refusal)
    const has = (sources: string[], module: string): boolean => sources.some((s) => s.includes(module));
    expect([has(atStart, 'shared/native/native-pull.ts'), has(atStart, 'shared/pull/pull.ts'), has(atStart, 'node_modules/amqplib/')]).toEqual([
      true,
      false,
      false,
    ]);
    expect([has(everyChunk, 'node_modules/amqplib/'), has(everyChunk, 'shared/pull/pull.ts')]).toEqual([true, false]);
  });

  it.runIf(NATIVE_BROKER)(
    `native pull (RabbitMQ ${BROKER_VERSION}): the bundle without the copy path acks, retries and parks on the local broker`,
    async () => {
      // Prepare: the fixture's native queue, its topology applied
      const broker = testBroker();
      const queue = (await loadDeclaredQueues({ dir: fixtureDir })).find((q) => q.name === 'bundle-native');
      const config = queue?.loadConfig({ AMQP_URL });
      if (config === undefined) throw new Error('no bundle-native queue in the fixture');
      await setUpTopology(broker, config);
      for (const body of ['ok', 'fail', 'bad']) broker.channel.sendToQueue(config.workQueue, Buffer.from(body), { persistent: true, messageId: body });
      // Act
      const summary = await invokeBundle(join(outdir, 'bundle-native-pull', 'index.mjs'), {}, { AMQP_URL, MAX_MESSAGES: '3', LOG_LEVEL: 'silent' });
      // Assess
      expect(summary).toMatchObject({ received: 3, acked: 1, retried: 1, parked: 1, requeued: 0, lost: 0 });
      const [parked] = await broker.drain(config.parkingQueue, 1);
      expect(parked?.properties.messageId).toBe('bad');
    },
  );

  it.runIf(!NATIVE_BROKER)(
    `native pull (RabbitMQ ${BROKER_VERSION}): the bundle refuses the older broker by name, through the amqplib it loads only then`,
    async () => {
      // Act
      const run = await runBundle(join(outdir, 'bundle-native-pull', 'index.mjs'), {}, { AMQP_URL, CONNECT_TIMEOUT_MS: '2000', LOG_LEVEL: 'silent' });
      // Assess
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain(`RabbitMQ ${BROKER_VERSION} cannot delay a message natively`);
    },
  );

  it('partner-sync-retention deletes what was parked 14 days ago or more from its parking lot on the local broker, keeping the rest in order', async () => {
    // Prepare: m-i parked 5·i days ago; PARKING_QUEUE points the queue's parking lot at the test's
    const { parked } = await agedLot(testBroker(), 5);
    // Act
    const result = await invokeBundle(join(outdir, 'partner-sync-retention', 'index.mjs'), {}, { AMQP_URL, PARKING_QUEUE: parked, LOG_LEVEL: 'silent' });
    // Assess
    expect(result).toEqual({ parkingQueue: parked, olderThanMs: 14 * 86_400_000, purged: 3, kept: 3, total: 6, ending: 'done' });
    expect((await testBroker().drain(parked, 3)).map((m) => m.properties.messageId)).toEqual(['m-0', 'm-1', 'm-2']);
  });

  it.each(['webhooks-pull', 'webhooks-event', 'partner-sync-pull'])(
    '%s reports its size and what each dependency costs, and leaves the AWS SDK to the runtime',
    async (name) => {
      // Prepare
      const bundle = bundles.find((b) => b.name === name);
      // Act
      const bytes = (await readFile(join(outdir, name, 'index.mjs'))).length;
      // Assess
      expect(bundle?.bytes).toBe(bytes);
      const loadedWith = (bundle?.chunks ?? []).filter((c) => !c.lazy).reduce((sum, c) => sum + c.bytes, 0);
      expect(bundle?.startBytes).toBe(bytes + loadedWith);
      expect(bundle?.costs.reduce((sum, c) => sum + c.bytes, 0)).toBe(bundle?.startBytes);
      expect(bundle?.mapBytes).toBeGreaterThan(0);
      expect(bundle?.costs.map((c) => c.source)).toEqual(expect.arrayContaining(['amqplib', '(own code)']));
      // A function's connection lives for one invocation: plain amqplib, no reconnecting manager.
      expect(bundle?.costs.map((c) => c.source)).not.toContain('amqp-connection-manager');
      expect(bundle?.costs.map((c) => c.source)).not.toContain('@aws-sdk/client-secrets-manager');
      // The SDK is imported only by chunks loaded at their first use: the secret store's (at the first
      // secret read) and the idempotency guard's (only when idempotency is on).
      expect(await readFile(join(outdir, name, 'index.mjs'), 'utf8')).not.toContain('@aws-sdk/');
      const lazy = await Promise.all((bundle?.chunks ?? []).filter((c) => c.lazy).map((c) => readFile(c.file, 'utf8')));
      expect(lazy.filter((code) => code.includes('@aws-sdk/client-secrets-manager'))).toHaveLength(1);
      expect(lazy.filter((code) => code.includes('@aws-sdk/client-dynamodb'))).toHaveLength(1);
      for (const chunk of (bundle?.chunks ?? []).filter((c) => !c.lazy)) expect(await readFile(chunk.file, 'utf8')).not.toContain('@aws-sdk/');
    },
  );

  it.each(['webhooks-pull', 'webhooks-event'])('%s bundles its dependencies as they ship, no file replaced', async (name) => {
    // Act
    const code = await readFile(join(outdir, name, 'index.mjs'), 'utf8');
    // Assess: the stand-ins the bundles once carried named where they came from
    expect(/bundle-stubs|amqp-codec-prune|left out of (this|the Lambda) bundle/.exec(code)?.[0]).toBeUndefined();
  });

  it('event: handles a sample aws:rmq event on the local broker, retrying one message and parking the other', async () => {
    // Prepare
    const broker = testBroker();
    const config = testConfig({ WORK_QUEUE: uniqueName('bundle-event') });
    await setUpTopology(broker, config);
    const event = eventFor({ [config.workQueue]: fixtureMessages('local') });
    // Act
    const summary = await invokeBundle(fixtureBundle('event'), event, functionEnv(config.workQueue));
    // Assess
    expect(summary).toMatchObject({ received: 2, acked: 0, retried: 1, parked: 1, stoppedBecause: 'idle' });
    const [parked] = await broker.drain(config.parkingQueue, 1);
    expect(parked?.properties.messageId).toBe('local-not-json');
  });

  it('pull: acks, retries and parks on the local broker', async () => {
    // Prepare: a partner that answers 200 on /ok and 503 on /down
    const broker = testBroker();
    const config = testConfig({ WORK_QUEUE: uniqueName('bundle-pull') });
    await setUpTopology(broker, config);
    const partner = await startPartner();
    try {
      for (let i = 0; i < 5; i++) publishJson(broker, config.workQueue, { url: `${partner.url}/ok` }, { messageId: `ok-${i}` });
      publishJson(broker, config.workQueue, { url: `${partner.url}/down` }, { messageId: 'down' });
      publishJson(broker, config.workQueue, 'not a webhook message', { messageId: 'bad' });
      // Act
      const summary = await invokeBundle(fixtureBundle('pull'), {}, functionEnv(config.workQueue));
      // Assess
      expect(summary).toMatchObject({ received: 7, acked: 5, retried: 1, parked: 1, requeued: 0, lost: 0 });
      const [parked] = await broker.drain(config.parkingQueue, 1);
      expect(parked?.properties.messageId).toBe('bad');
      const [back] = await broker.drain(config.workQueue, 1);
      expect([back?.properties.messageId, back?.properties.headers?.['x-retry-no']]).toEqual(['down', 1]);
      expect(await broker.messageCount(config.workQueue)).toBe(0);
    } finally {
      partner.server.close();
    }
  });

  it('pull: a config whose delay queue was never applied fails the invocation before it takes a message, saying what to run', async () => {
    // Prepare: the topology applied for the config, then other tiers (300, 600, 1200 ms) in the function's environment
    const broker = testBroker();
    const config = testConfig({ WORK_QUEUE: uniqueName('bundle-pull') });
    await setUpTopology(broker, config);
    const env = { ...functionEnv(config.workQueue), BACKOFF_INITIAL_MS: '300', LOG_LEVEL: 'info' };
    publishJson(broker, config.workQueue, { url: 'http://127.0.0.1:1/down' }, { messageId: 'down' });
    // Act
    const run = await runBundle(fixtureBundle('pull'), {}, env);
    // Assess
    expect(run.code).not.toBe(0);
    expect(jsonLines(run.stderr)).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'invocation summary: ended early',
        errorName: 'TopologyDriftError',
        reason: expect.stringContaining(`queue ${tierQueueName(config.workQueue, 300)}`),
        summary: expect.objectContaining({ received: 0, stoppedBecause: 'topology-drift' }),
      }),
    );
    expect(await broker.messageCount(config.workQueue)).toBe(1);
  });

  it('pull: an unreachable broker still gives one JSON summary line on stderr (Powertools Logger) and EMF on stdout, then the handler throws', async () => {
    // Act: nothing listens on port 1
    const env = { AMQP_URL: 'amqp://guest:guest@127.0.0.1:1', CONNECT_TIMEOUT_MS: '500', AWS_LAMBDA_FUNCTION_NAME: 'bundle-pull' };
    const run = await runBundle(fixtureBundle('pull'), {}, env);
    // Assess
    expect(run.code).not.toBe(0);
    expect(jsonLines(run.stderr).filter((line) => String(line.message).startsWith('invocation summary'))).toEqual([
      expect.objectContaining({
        level: 'ERROR',
        service: 'bundle-pull',
        coldStart: true,
        errorName: 'BrokerConnectionError',
        function_request_id: 'bundle-test',
        function_name: 'bundle-test',
        summary: expect.objectContaining({ received: 0, stoppedBecause: 'connect-failed' }),
      }),
    ]);
    expect(jsonLines(run.stdout)).toEqual([
      expect.objectContaining({ service: 'bundle-pull', invocationErrors: 1, received: 0 }),
      expect.objectContaining({ service: 'bundle-pull', errorName: 'BrokerConnectionError', invocationErrors: 1 }),
    ]);
  });
});
