/**
 * Issue 23's "done when", as a team would do it, outside this repository:
 *   1. `npm pack` here (prepack builds dist/package/), then, in an empty temporary directory, `npm install`
 *      of that tarball with the registry's dependencies (and aws-cdk-lib, constructs, typescript and
 *      @types/node, as a team's CDK project has them);
 *   2. one function file, `functions/orders.ts`, importing the package by its name, type-checked by tsc
 *      against the declarations the package ships;
 *   3. `boomerang topology apply`, then `boomerang invoke pull` with a message that fails once and then
 *      succeeds: the first invocation retries it, the broker brings it back, the second acks it;
 *   4. a CDK app of the team's own (plain ESM JavaScript) instantiating the construct for that queue:
 *      the synthesized template has its functions, schedule and event source mapping, and the pull
 *      function's bundle (built by the construct from the installed package) handles a message against
 *      the broker as Lambda would run it;
 *   5. (issue 30) the same template declares the queue's topology with a custom resource that the
 *      schedule and the event source mapping depend on, and that resource's bundle, run with
 *      CloudFormation's own requests and a local HTTP server as ResponseURL, makes the queues on Create,
 *      fails naming a differing queue on Update (changing nothing), and deletes nothing on Delete.
 * Versions of aws-cdk-lib, constructs, typescript and @types/node are this repository's locked ones, so
 * the install comes from npm's cache when it has them.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AMQP_URL, sleep, uniqueName } from '../helpers/broker.js';
import { publishJson } from '../helpers/engine.js';
import { useTestBroker } from '../helpers/topology.js';
import { REPO_ROOT } from '../fixtures/queue-files.js';
import { cloudFormationEvent, startResponseServer } from '../helpers/cloudformation.js';

/** Limits, not measurements: a pack (tsc) and an install of aws-cdk-lib took minutes on the loaded 2-core machine. */
const INSTALL_TIMEOUT_MS = 600_000;
const STEP_TIMEOUT_MS = 180_000;

type Run = { readonly code: number | null; readonly stdout: string; readonly stderr: string };

const testBroker = useTestBroker();
const workQueue = uniqueName('package-orders');
let team: string;
let packDir: string;
/** What npm warned about while the team installed, as the README says to. */
let installWarnings: string[] = [];

function run(command: string, args: readonly string[], cwd: string, env: Record<string, string> = {}, timeout = STEP_TIMEOUT_MS): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, AMQP_URL, LOG_LEVEL: 'silent', ...env }, timeout, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
      },
    );
  });
}

/** The team's `boomerang` bin, as `npx boomerang` runs it. */
function boomerang(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  return run(join(team, 'node_modules/.bin/boomerang'), args, team, env);
}

/** The locked version of one of this repository's packages. */
function locked(name: string): string {
  const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string }> };
  const entry = lock.packages[`node_modules/${name}`];
  if (entry === undefined) throw new Error(`${name} is not in package-lock.json`);
  return entry.version;
}

/** The README's step-4 app (`infra/app.ts`), as a team copies it. */
function readmeApp(): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const block = /The app, `infra\/app\.ts`:\n\n```ts\n([\s\S]+?)```/.exec(readme)?.[1];
  if (block === undefined) throw new Error('README.md has no step-4 app block after "The app, `infra/app.ts`:"');
  return block;
}

/** The last line of stdout as JSON (the invocation's summary). */
function summaryOf(result: Run): Record<string, unknown> {
  return JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
}

const ORDERS = `import { defineQueue, RetryableError } from 'boomerang-rabbitmq';

/** The team's queue: the partner is busy on a message's first attempt, and takes it on the next. */
export const { queue, pull, event } = defineQueue({
  name: 'orders',
  workQueue: ${JSON.stringify(workQueue)},
  handler: async (message) => {
    if (message.retryNo === 0) throw new RetryableError('partner busy', { retryAfterMs: 500 });
  },
  retry: { maxRetries: 3, initialDelayMs: 500 },
  // Both modes, so that the synthesized stack has a schedule and an event source mapping (which the package test only synthesizes).
  deploy: { modes: ['pull', 'event'], acknowledgeCompetingModes: true, pull: { rateMinutes: 1 } },
});
`;

const APP = `import { App, Stack } from 'aws-cdk-lib';
import { BoomerangQueues } from 'boomerang-rabbitmq/cdk';

const app = new App({ outdir: 'cdk.out' });
const stack = new Stack(app, 'TeamOrders');
new BoomerangQueues(stack, 'Retries', {
  functionsDir: 'functions',
  brokerSecret: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:team/broker-AbCdEf',
  brokerHost: 'b-1234.mq.eu-west-1.amazonaws.com',
  brokerArn: 'arn:aws:mq:eu-west-1:123456789012:broker:team:b-1234',
});
app.synth();
`;

beforeAll(async () => {
  packDir = await mkdtemp(join(tmpdir(), 'boomerang-pack-'));
  team = await mkdtemp(join(tmpdir(), 'boomerang-team-'));
  const packed = await run('npm', ['pack', '--json', '--pack-destination', packDir], REPO_ROOT, {}, INSTALL_TIMEOUT_MS);
  if (packed.code !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
  const [{ filename }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string }];
  await writeFile(join(team, 'package.json'), `${JSON.stringify({ name: 'team-orders', private: true, type: 'module' }, null, 2)}\n`);
  // The README's step 1, as written: allow esbuild's install check, install the package with the CDK libraries, then the CDK CLI.
  const allowed = await run('npm', ['pkg', 'set', 'allowScripts.esbuild=true', '--json'], team);
  if (allowed.code !== 0) throw new Error(`npm pkg set in ${team} failed: ${allowed.stderr}`);
  const dependencies = [join(packDir, filename), ...['aws-cdk-lib', 'constructs', 'typescript', '@types/node'].map((name) => `${name}@${locked(name)}`)];
  const installed = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...dependencies], team, {}, INSTALL_TIMEOUT_MS);
  if (installed.code !== 0) throw new Error(`npm install in ${team} failed: ${installed.stderr}`);
  const cli = await run(
    'npm',
    ['install', '--save-dev', '--no-audit', '--no-fund', '--prefer-offline', `aws-cdk@${locked('aws-cdk')}`],
    team,
    {},
    INSTALL_TIMEOUT_MS,
  );
  if (cli.code !== 0) throw new Error(`npm install aws-cdk in ${team} failed: ${cli.stderr}`);
  installWarnings = [installed.stderr, cli.stderr]
    .join('\n')
    .split('\n')
    .filter((line) => /^npm warn/i.test(line));
}, INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await rm(team, { recursive: true, force: true });
  await rm(packDir, { recursive: true, force: true });
});

describe('the packed package in a team directory of its own', () => {
  it('ships compiled JavaScript and declarations only: no TypeScript source, no tests', async () => {
    const files = await readdir(join(team, 'node_modules/boomerang-rabbitmq'), { recursive: true });
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    expect(files.some((f) => f.startsWith('test'))).toBe(false);
    expect(files).toContain(join('dist/package/shared/index.js'));
    expect(files).toContain(join('dist/package/shared/index.d.ts'));
  });

  it(
    'installs as the README says without a warning, and the CDK CLI answers (the package aws-cdk, not cdk)',
    async () => {
      // Assess: a warning here is one a team meets and the docs do not explain
      expect(installWarnings).toEqual([]);
      const version = await run(join(team, 'node_modules/.bin/cdk'), ['--version'], team);
      expect(version.code, version.stderr).toBe(0);
      expect(version.stdout).toMatch(/^2\.\d+\.\d+/);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "a function file importing the package by name, and the README's CDK app, type-check against its declarations",
    async () => {
      await mkdir(join(team, 'functions'));
      await writeFile(join(team, 'functions/orders.ts'), ORDERS);
      await mkdir(join(team, 'infra'));
      await writeFile(join(team, 'infra/app.ts'), readmeApp());
      await writeFile(
        join(team, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            target: 'ES2022',
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            types: ['node'],
          },
          include: ['functions', 'infra'],
        }),
      );
      const checked = await run(process.execPath, [join(team, 'node_modules/typescript/bin/tsc'), '-p', team], team);
      expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'boomerang topology apply, then boomerang invoke pull: a message that fails once is retried, then acked',
    async () => {
      // Prepare
      const broker = await applyTopology();
      publishJson(broker, workQueue, { order: 1 }, { messageId: 'order-1' });
      // Act: one invocation retries it; after its delay, the next acks it
      const first = await boomerang(['invoke', 'pull', '--function', 'orders'], { IDLE_TIMEOUT_MS: '300' });
      expect(first.code, first.stderr).toBe(0);
      expect(summaryOf(first)).toMatchObject({ received: 1, retried: 1, acked: 0 });
      let second: Record<string, unknown> = {};
      for (let tick = 0; tick < 10 && second.acked !== 1; tick++) {
        await sleep(500);
        const next = await boomerang(['invoke', 'pull', '--function', 'orders'], { IDLE_TIMEOUT_MS: '300' });
        expect(next.code, next.stderr).toBe(0);
        second = summaryOf(next);
      }
      // Assess
      expect(second).toMatchObject({ received: 1, acked: 1, retried: 0, parked: 0 });
      expect(await broker.messageCount(workQueue)).toBe(0);
      expect(await broker.messageCount(`${workQueue}.parked`)).toBe(0);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'a CDK app of its own synthesizes the construct for that queue, whose bundle handles a message as Lambda runs it',
    async () => {
      // Act: the team's app, run by plain node
      await writeFile(join(team, 'app.mjs'), APP);
      const synth = await run(process.execPath, ['app.mjs'], team);
      expect(synth.code, synth.stderr).toBe(0);
      // Assess: the function and its schedule
      const template = await readTemplate();
      const resources = Object.values(template.Resources);
      const functions = resources.filter((r) => r.Type === 'AWS::Lambda::Function');
      expect(functions.map((f) => f.Properties.FunctionName)).toEqual([
        'TeamOrders-orders-topology',
        'TeamOrders-orders-pull',
        'TeamOrders-orders-event',
        'TeamOrders-operator',
      ]);
      expect(resources.filter((r) => r.Type === 'AWS::Events::Rule').map((r) => r.Properties.ScheduleExpression)).toEqual(['rate(1 minute)']);
      // The bundle the construct built from the installed package (the asset whose object the function's code names), invoked as Lambda would
      const bundle = await bundleOf(template, 'TeamOrders-orders-pull');
      const broker = await applyTopology();
      publishJson(broker, workQueue, { order: 2 }, { messageId: 'order-2' });
      const totals = { received: 0, acked: 0, retried: 0, parked: 0 };
      for (let tick = 0; tick < 10 && totals.acked < 1; tick++) {
        const summary = await invokeBundle(bundle);
        for (const key of Object.keys(totals) as (keyof typeof totals)[]) totals[key] += Number(summary[key] ?? 0);
        await sleep(500);
      }
      expect(totals).toEqual({ received: 2, acked: 1, retried: 1, parked: 0 });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "declares the queue's topology in the stack: the schedule and the event source mapping depend on its custom resource, whose bundle answers CloudFormation's Create, Update and Delete against the broker",
    async () => {
      // Prepare: the template the previous test synthesized
      const template = await readTemplate();
      const [[resourceId, resource] = []] = Object.entries(template.Resources).filter(([, r]) => r.Type === 'Custom::BoomerangTopology');
      expect(resourceId).toBeDefined();
      const dependsOnIt = (type: string) =>
        Object.values(template.Resources).filter((r) => r.Type === type && (r.DependsOn ?? []).includes(resourceId as string)).length;
      expect([dependsOnIt('AWS::Events::Rule'), dependsOnIt('AWS::Lambda::EventSourceMapping')]).toEqual([1, 1]);
      const { ServiceToken: _token, ...properties } = resource!.Properties as { ServiceToken: unknown; Entities: string[]; WorkQueue: string };
      expect(properties).toMatchObject({ Queue: 'orders', WorkQueue: workQueue, VirtualHost: '/' });
      const broker = testBroker();
      for (const entity of properties.Entities) entity.startsWith('queue ') ? broker.trackQueue(entity.slice(6)) : broker.trackExchange(entity.slice(9));
      const bundle = await bundleOf(template, 'TeamOrders-orders-topology');
      const physicalResourceId = `${workQueue}@/`;
      const server = await startResponseServer();
      try {
        // Act 1: Create
        await invokeTopologyBundle(bundle, cloudFormationEvent('Create', server.url, properties));
        const created = server.responses.at(-1)?.body;
        // Assess 1: SUCCESS, and every queue and exchange of the plan on the broker
        expect(created).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: physicalResourceId });
        for (const entity of properties.Entities)
          expect(await broker.exists(entity.startsWith('queue ') ? 'queue' : 'exchange', entity.slice(entity.indexOf(' ') + 1)), entity).toBe(true);
        // Act 2: an Update that meets a delay queue someone declared with another TTL
        const delayQueue = `${workQueue}.delay.500ms`;
        const ch = await broker.connection.createChannel();
        await ch.deleteQueue(delayQueue);
        await ch.assertQueue(delayQueue, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-message-ttl': 999 } });
        await ch.close();
        await invokeTopologyBundle(bundle, cloudFormationEvent('Update', server.url, properties, { physicalResourceId, oldProperties: properties }));
        const updated = server.responses.at(-1)?.body;
        // Assess 2: FAILED, naming the queue, its argument and what to run; the queue unchanged
        expect(updated?.Status).toBe('FAILED');
        expect(updated?.Reason).toContain(`queue '${delayQueue}': `);
        expect(updated?.Reason).toContain("x-message-ttl is '999', the plan wants '500'");
        expect(updated?.Reason).toContain(`rabbitmqctl delete_queue '${delayQueue}'`);
        const check = await broker.connection.createChannel();
        await check.assertQueue(delayQueue, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-message-ttl': 999 } });
        await check.close();
        // Act 3: Delete, with a message in the work queue
        const confirm = await broker.connection.createConfirmChannel();
        confirm.sendToQueue(workQueue, Buffer.from('{"order":3}'));
        await confirm.waitForConfirms();
        await confirm.close();
        await invokeTopologyBundle(bundle, cloudFormationEvent('Delete', server.url, properties, { physicalResourceId }));
        const deleted = server.responses.at(-1)?.body;
        // Assess 3: SUCCESS, nothing deleted, the message still there
        expect(deleted).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: physicalResourceId });
        expect(deleted?.Reason).toContain(`${workQueue} (1 messages)`);
        for (const entity of properties.Entities)
          expect(await broker.exists(entity.startsWith('queue ') ? 'queue' : 'exchange', entity.slice(entity.indexOf(' ') + 1)), entity).toBe(true);
        expect(await broker.messageCount(workQueue)).toBe(1);
        expect(server.responses.map((r) => [r.method, r.contentType])).toEqual([
          ['PUT', ''],
          ['PUT', ''],
          ['PUT', ''],
        ]);
      } finally {
        await server.close();
      }
    },
    STEP_TIMEOUT_MS,
  );

  it('a CommonJS CDK app (what cdk init makes) can require the construct: Node 20.19+ requires an ES module without top-level await', async () => {
    // Act
    const required = await run(
      process.execPath,
      ['-e', "const { BoomerangQueues } = require('boomerang-rabbitmq/cdk'); process.stdout.write(typeof BoomerangQueues);"],
      team,
    );
    // Assess
    expect(required.code, required.stderr).toBe(0);
    expect(required.stdout).toBe('function');
  });
});

/** `boomerang topology apply`, as the team types it, its queues and exchanges (as `topology export` names them) tracked for deletion after the test. */
async function applyTopology(): Promise<ReturnType<typeof testBroker>> {
  const broker = testBroker();
  const applied = await boomerang(['topology', 'apply', '--function', 'orders']);
  expect(applied.code, applied.stderr).toBe(0);
  const exported = await boomerang(['topology', 'export', '--function', 'orders']);
  expect(exported.code, exported.stderr).toBe(0);
  const definitions = JSON.parse(exported.stdout) as { queues: { name: string }[]; exchanges: { name: string }[] };
  broker.trackQueue(...definitions.queues.map((q) => q.name));
  broker.trackExchange(...definitions.exchanges.map((x) => x.name));
  return broker;
}

type Template = { Resources: Record<string, { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] }> };

/** The template the team's app synthesized. */
async function readTemplate(): Promise<Template> {
  return JSON.parse(await readFile(join(team, 'cdk.out/TeamOrders.template.json'), 'utf8')) as Template;
}

/** The bundle (index.mjs) of the function named `functionName`: the asset whose object its code names. */
async function bundleOf(template: Template, functionName: string): Promise<string> {
  const fn = Object.values(template.Resources).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.FunctionName === functionName);
  const objectKey = (fn!.Properties.Code as { S3Key: string }).S3Key;
  const assets = JSON.parse(await readFile(join(team, 'cdk.out/TeamOrders.assets.json'), 'utf8')) as {
    files: Record<string, { source: { path: string }; destinations: Record<string, { objectKey: string }> }>;
  };
  const asset = Object.values(assets.files).find((file) => Object.values(file.destinations).some((d) => d.objectKey === objectKey));
  expect(asset, `no asset for ${objectKey}`).toBeDefined();
  return join(team, 'cdk.out', asset?.source.path as string, 'index.mjs');
}

/** Calls the topology bundle's `handler` with `event` in a plain node process, as Lambda would (AMQP_URL in place of the secret). */
async function invokeTopologyBundle(file: string, event: unknown): Promise<void> {
  const script = `
    const { handler } = await import(${JSON.stringify(pathToFileURL(file).href)});
    const deadline = Date.now() + 60000;
    await handler(JSON.parse(process.env.CFN_EVENT), { getRemainingTimeInMillis: () => deadline - Date.now(), logStreamName: 'package-test' });`;
  const result = await run(process.execPath, ['--input-type=module', '-e', script], packDir, { CFN_EVENT: JSON.stringify(event) });
  if (result.code !== 0) throw new Error(`the topology bundle failed: ${result.stderr}`);
}

/** Calls a bundle's `handler` in a plain node process, outside any node_modules, as Lambda would; resolves with its summary. */
async function invokeBundle(file: string): Promise<Record<string, unknown>> {
  const script = `
    const { handler } = await import(${JSON.stringify(pathToFileURL(file).href)});
    const deadline = Date.now() + 5000;
    process.stdout.write(JSON.stringify(await handler({}, { awsRequestId: 'package-test', getRemainingTimeInMillis: () => deadline - Date.now() })));`;
  const result = await run(process.execPath, ['--input-type=module', '-e', script], packDir, {
    WORK_QUEUE: workQueue,
    IDLE_TIMEOUT_MS: '300',
    SAFETY_MARGIN_MS: '500',
  });
  if (result.code !== 0) throw new Error(`the bundle failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}
