/**
 * The docs' "Add your own handler", followed step by step on a fixture, as a new user would:
 *   1. write functions/<name>.ts (here: copied from test/fixtures/queue-templates/orders.ts.template into a
 *      temporary functions folder that BOOMERANG_FUNCTIONS_DIR points discovery at);
 *   2. `boomerang topology apply --function <name>`, and try it: `boomerang invoke pull --function <name>`
 *      (here also its Lambda bundle, built by the real bundler, run in a plain node process);
 *   3. `npm run synth`: its functions, schedule and mapping are in the template.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundles, functionEntries } from '../../shared/cdk/bundles.js';
import { topologyOptionsFromConfig } from '../../shared/config/config.js';
import { type DeclaredQueue, loadDeclaredQueues } from '../../shared/queues/declared-queues.js';
import { buildTopologyPlan } from '../../shared/topology/plan.js';
import { AMQP_URL, sleep } from '../helpers/broker.js';
import { publishJson } from '../helpers/engine.js';
import { trackPlan, useTestBroker } from '../helpers/topology.js';
import { REPO_ROOT, tempFunctionsDir, writeQueueFile } from '../fixtures/queue-files.js';
import { type CliRun, runBoomerang } from '../helpers/boomerang-cli.js';

/** A limit, not a measurement: tsx loading aws-cdk-lib and a synth took up to a minute on the loaded 2-core machine. */
const STEP_TIMEOUT_MS = 180_000;

const testBroker = useTestBroker();
const suffix = Math.random().toString(36).slice(2, 8);
const name = `orders-${suffix}`;
const workQueue = `test-own-handler-${suffix}`;
let functions: ReturnType<typeof tempFunctionsDir>;
let scratch: string;
let queue: DeclaredQueue;

/** Runs one of the repository's scripts the way npm does (node + tsx), with the fixture's functions folder. */
function npmRun(script: string, args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    const options = {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, AMQP_URL, LOG_LEVEL: 'silent', BOOMERANG_FUNCTIONS_DIR: functions.dir, ...env },
      timeout: STEP_TIMEOUT_MS,
      maxBuffer: 16 * 1024 * 1024,
    };
    execFile(process.execPath, ['--import', 'tsx', script, ...args], options, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

/** Runs `boomerang <args>` as a team types it, on the fixture's functions folder (`--functions-dir`). */
function boomerang(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runBoomerang([...args, '--functions-dir', functions.dir], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, AMQP_URL, LOG_LEVEL: 'silent', ...env },
    timeoutMs: STEP_TIMEOUT_MS,
  });
}

/** Calls a bundle's `handler` in a plain node process, as Lambda would; resolves with the summary it returned. */
function invokeBundle(file: string): Promise<Record<string, number | string>> {
  const script = `
    const { handler } = await import(${JSON.stringify(`file://${file}`)});
    const deadline = Date.now() + 5000;
    process.stdout.write(JSON.stringify(await handler({}, { awsRequestId: 'own-handler', getRemainingTimeInMillis: () => deadline - Date.now() })));`;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { cwd: scratch, env: { PATH: process.env.PATH, AMQP_URL, IDLE_TIMEOUT_MS: '300', SAFETY_MARGIN_MS: '500', LOG_LEVEL: 'silent' } },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`the bundle failed: ${stderr}`));
        else resolve(JSON.parse(stdout) as Record<string, number | string>);
      },
    );
  });
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'boomerang-own-handler-'));
  // Step 1: the team's file, in a functions folder of its own.
  functions = tempFunctionsDir();
  writeQueueFile(functions.dir, { template: 'orders', name, workQueue });
  [queue] = (await loadDeclaredQueues({ dir: functions.dir })) as [DeclaredQueue];
});

afterAll(async () => {
  functions.remove();
  await rm(scratch, { recursive: true, force: true });
});

describe('Add your own handler, step by step', () => {
  it('1. the file in functions/ is a declared queue, its options checked', () => {
    expect(queue).toMatchObject({ name, workQueue, deploy: { modes: ['pull', 'event'], pull: { rateMinutes: 5 }, event: { batchSize: 20 } } });
    expect(queue.loadConfig({}).policy).toMatchObject({ maxRetries: 2, initialDelayMs: 200 });
  });

  it(
    '2. topology apply, then its function handles, retries and parks as its options say: through boomerang invoke and through its Lambda bundle',
    async () => {
      // Prepare: the step as the user types it
      const broker = testBroker();
      trackPlan(broker, buildTopologyPlan(topologyOptionsFromConfig(queue.loadConfig({}))));
      const applied = await boomerang(['topology', 'apply', '--function', name]);
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stdout).toContain(`topology applied for ${workQueue} (tiers mode`);
      // Act (a): one invocation through the CLI
      publishJson(broker, workQueue, { id: 'cli-ok', outcome: 'ok' }, { messageId: 'cli-ok' });
      const invoked = await boomerang(['invoke', 'pull', '--function', name], { IDLE_TIMEOUT_MS: '300' });
      // Assess (a)
      expect(invoked.code, invoked.stderr).toBe(0);
      expect(JSON.parse(invoked.stdout.trim().split('\n').at(-1) as string)).toMatchObject({ received: 1, acked: 1 });
      // Act (b): the real bundler, then the pull bundle as Lambda runs it, every few hundred ms as a schedule would
      const bundles = await buildBundles({ outdir: join(scratch, 'dist'), entries: functionEntries([queue]) });
      expect(bundles.map((b) => b.name).sort()).toEqual([`${name}-event`, `${name}-pull`]);
      publishJson(broker, workQueue, { id: 'a', outcome: 'ok' }, { messageId: 'ok' });
      publishJson(broker, workQueue, { id: 'b', outcome: 'busy' }, { messageId: 'busy' });
      publishJson(broker, workQueue, { id: 'c', outcome: 'invalid' }, { messageId: 'invalid' });
      const totals = { received: 0, acked: 0, retried: 0, parked: 0 };
      for (let tick = 0; tick < 8 && totals.acked + totals.parked < 3; tick++) {
        const summary = await invokeBundle(join(scratch, 'dist', `${name}-pull`, 'index.mjs'));
        for (const key of Object.keys(totals) as (keyof typeof totals)[]) totals[key] += Number(summary[key] ?? 0);
        await sleep(500);
      }
      // Assess (b): ok acked; busy tried 3 times (maxRetries 2) then parked; invalid parked at once
      expect(totals).toEqual({ received: 5, acked: 1, retried: 2, parked: 2 });
      const parked = await broker.drain(queue.loadConfig({}).parkingQueue, 2);
      expect(parked.map((m) => m.properties.messageId).sort()).toEqual(['busy', 'invalid']);
      expect(parked.find((m) => m.properties.messageId === 'busy')?.properties.headers?.['x-retry-no']).toBe(2);
      expect(await broker.messageCount(workQueue)).toBe(0);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    '3. npm run synth deploys it: both functions, its schedule, its mapping on its work queue, its topology resource',
    async () => {
      // Act
      const synth = await npmRun('infra/synth.ts', [], { CDK_OUTDIR: join(scratch, 'cdk.out') });
      // Assess
      expect(synth.code, synth.stderr).toBe(0);
      const templateFile = (await readdir(join(scratch, 'cdk.out'))).find((f) => f.endsWith('.template.json'));
      const template = JSON.parse(await readFile(join(scratch, 'cdk.out', templateFile as string), 'utf8')) as {
        Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
      };
      const resources = Object.values(template.Resources);
      const of = (type: string) => resources.filter((r) => r.Type === type).map((r) => r.Properties);
      expect(
        of('AWS::Lambda::Function')
          .map((p) => p.FunctionName)
          .sort(),
      ).toEqual(['Boomerang-operator', `Boomerang-${name}-event`, `Boomerang-${name}-pull`, `Boomerang-${name}-topology`]);
      expect(of('Custom::BoomerangTopology')).toEqual([expect.objectContaining({ WorkQueue: workQueue })]);
      expect(of('AWS::Events::Rule')).toEqual([expect.objectContaining({ ScheduleExpression: 'rate(5 minutes)' })]);
      expect(of('AWS::Lambda::EventSourceMapping')).toEqual([expect.objectContaining({ Queues: [workQueue], BatchSize: 20 })]);
      expect(of('AWS::Logs::LogGroup')).toHaveLength(4);
      // Three per function, and one on the parking lot's depth.
      expect(of('AWS::CloudWatch::Alarm')).toHaveLength(7);
    },
    STEP_TIMEOUT_MS,
  );
});
