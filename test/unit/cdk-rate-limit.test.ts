import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BoomerangQueues } from '../../shared/cdk/index.js';
import { readQueueDefinitions } from '../../shared/cdk/definitions.js';
import { checkFunctionEnvironment } from '../../shared/cdk/function-environment.js';
import { rateLimitShares } from '../../shared/cdk/rate-limit-shares.js';
import { defineQueue } from '../../shared/queues/define-queue.js';
import { resolveDeploy, type DeployOptions } from '../../shared/queues/deploy-options.js';
import { tempFunctionsDir, writeQueueFile } from '../fixtures/queue-files.js';
import { configErrorOf } from '../helpers/config-error.js';
import { SKIP_BUNDLING, SYNTH_TIMEOUT_MS } from '../fixtures/synth.js';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/broker-AbCdEf';
const BROKER_ARN = 'arn:aws:mq:eu-west-1:123456789012:broker:shop:b-1234abcd-0000-0000-0000-000000000000';
const SOURCE = "defineQueue('orders')";

/** The shares of a queue `orders` deployed as `deploy` says, with a limit of 20 a second (and a store when `store`). */
function shares(deploy: DeployOptions, store = false): number | undefined {
  return rateLimitShares({ name: 'orders', file: 'functions/orders.ts', deploy: resolveDeploy(deploy, SOURCE), rateLimit: { perSecond: 20, store } });
}

describe('Function: rateLimitShares', () => {
  it.each([
    { label: 'pull alone, reserved 1 (the default)', deploy: {}, store: false, expected: 1 },
    { label: 'pull reserved 3', deploy: { pull: { reservedConcurrency: 3 } }, store: false, expected: 3 },
    { label: 'event alone: the mapping runs one invocation at a time', deploy: { modes: ['event'] }, store: false, expected: 1 },
    {
      label: 'pull reserved 2 and event',
      deploy: { modes: ['pull', 'event'], acknowledgeCompetingModes: true, pull: { reservedConcurrency: 2 } },
      store: false,
      expected: 3,
    },
    { label: 'pull unreserved with a store: its schedule, 60 s ticks every minute', deploy: { pull: { reservedConcurrency: 0 } }, store: true, expected: 2 },
    {
      label: 'pull unreserved with a store: 900 s ticks every 5 minutes, and event',
      deploy: { modes: ['pull', 'event'], acknowledgeCompetingModes: true, pull: { reservedConcurrency: 0, timeoutSeconds: 900, rateMinutes: 5 } },
      store: true,
      expected: 5,
    },
  ] as const)('$label: $expected', ({ deploy, store, expected }) => {
    expect(shares(deploy as DeployOptions, store)).toBe(expected);
  });

  it("is the stack's to set: functionEnvironment may not", () => {
    // Prepare
    const { queue } = defineQueue({ name: 'orders', handler: async () => undefined, workQueue: 'orders', rateLimit: { perSecond: 20 } });
    // Act
    const error = configErrorOf(() => checkFunctionEnvironment(queue, { RATE_LIMIT_SHARES: '4' }));
    // Assess
    expect(error.message).toMatch(/^functionEnvironment must not set RATE_LIMIT_SHARES: the stack sets it for a queue with a rate limit/);
  });

  it('keeps a password out of the template: RATE_LIMIT_STORE may not hold one', () => {
    // Prepare
    const { queue } = defineQueue({ name: 'orders', handler: async () => undefined, workQueue: 'orders', rateLimit: { perSecond: 20 } });
    // Act
    const error = configErrorOf(() => checkFunctionEnvironment(queue, { RATE_LIMIT_STORE: 'redis://:s3cret@pace.internal:6379' }));
    // Assess
    expect(error.message).toMatch(/^functionEnvironment must not hold a password in RATE_LIMIT_STORE \(redis:\/\/:\*\*\*@pace\.internal:6379\)/);
    expect(error.message).not.toContain('s3cret');
  });

  it('is undefined for a queue without a rate limit', () => {
    expect(rateLimitShares({ name: 'orders', file: 'functions/orders.ts', deploy: resolveDeploy({}, SOURCE), rateLimit: undefined })).toBeUndefined();
  });

  it('refuses an unreserved pull function without a store, naming the file and what to do', () => {
    // Act
    const error = configErrorOf(() => shares({ pull: { reservedConcurrency: 0 } }));
    // Assess
    expect(error.message).toMatch(
      /^functions\/orders\.ts: the rate limit of orders \(20 a second\) cannot hold: its pull function is unreserved \(deploy\.pull\.reservedConcurrency 0\)/,
    );
    expect(error.message).toContain('Reserve its concurrency (deploy.pull.reservedConcurrency: 1 keeps one tick at a time), or give the limit a Redis store');
  });
});

describe('Class: BoomerangQueues with a rate limit', () => {
  let fixtures: ReturnType<typeof tempFunctionsDir>;
  let template: Template;

  beforeAll(() => {
    fixtures = tempFunctionsDir();
    const paced = writeQueueFile(fixtures.dir, { template: 'orders-paced', name: 'paced', workQueue: 'paced' });
    const plain = writeQueueFile(fixtures.dir, { template: 'orders-event', name: 'plain', workQueue: 'plain' });
    const app = new App({ context: SKIP_BUNDLING });
    const stack = new Stack(app, 'Shop');
    new BoomerangQueues(stack, 'Queues', {
      brokerSecret: SECRET_ARN,
      brokerHost: 'b-1.mq.eu-west-1.amazonaws.com',
      brokerArn: BROKER_ARN,
      files: [paced, plain],
    });
    template = Template.fromStack(stack);
  }, SYNTH_TIMEOUT_MS);

  afterAll(() => fixtures.remove());

  it("sets RATE_LIMIT_SHARES on the pull and event functions of a queue with a limit: the pull function's reserved concurrency, plus one for the event function", () => {
    // Act
    const functions = template.findResources('AWS::Lambda::Function');
    const shares = Object.fromEntries(
      Object.values(functions).map((fn) => {
        const variables = fn.Properties as { FunctionName: string; Environment: { Variables: Record<string, string> } };
        return [variables.FunctionName, variables.Environment.Variables.RATE_LIMIT_SHARES];
      }),
    );
    // Assess
    expect(shares).toEqual({ 'Shop-paced-pull': '3', 'Shop-paced-event': '3', 'Shop-paced-retention': undefined, 'Shop-plain-event': undefined });
  });

  it(
    'refuses, before any resource, a limit whose pull function is unreserved and has no store',
    () => {
      // Prepare
      const file = join(fixtures.dir, 'unreserved.ts');
      writeFileSync(
        file,
        "import { defineQueue } from 'boomerang-rabbitmq';\nexport const { queue } = defineQueue({ name: 'unreserved', handler: async () => undefined, workQueue: 'unreserved', rateLimit: { perSecond: 5 }, deploy: { pull: { reservedConcurrency: 0 } } });\n",
      );
      // Act
      const error = configErrorOf(() => readQueueDefinitions({ files: [file], functionEnvironment: {} }));
      // Assess
      expect(error.message).toMatch(/unreserved\.ts: the rate limit of unreserved \(5 a second\) cannot hold/);
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'takes an unreserved pull function when a store serves the limit (functionEnvironment names one)',
    () => {
      // Prepare
      const file = join(fixtures.dir, 'stored.ts');
      writeFileSync(
        file,
        "import { defineQueue } from 'boomerang-rabbitmq';\nexport const { queue } = defineQueue({ name: 'stored', handler: async () => undefined, workQueue: 'stored', rateLimit: { perSecond: 5 }, deploy: { pull: { reservedConcurrency: 0 } } });\n",
      );
      // Act
      const [queue] = readQueueDefinitions({ files: [file], functionEnvironment: { RATE_LIMIT_STORE: 'rediss://pace.internal:6380' } });
      // Assess
      expect(queue).toMatchObject({ rateLimit: { perSecond: 5, store: true }, rateLimitShares: 2 });
    },
    SYNTH_TIMEOUT_MS,
  );
});
