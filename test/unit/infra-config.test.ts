import { beforeAll, describe, expect, it } from 'vitest';
import { CONTEXT_KEYS, MOVED_KEYS } from '../../infra/context-keys.js';
import { stackConfigFromContext } from '../../infra/stack-config.js';
import { ConfigError } from '../../shared/errors.js';
import { type DeclaredQueue, loadDeclaredQueues } from '../../shared/queues/declared-queues.js';

let queues: DeclaredQueue[];

beforeAll(async () => {
  queues = await loadDeclaredQueues({ env: {} });
});

/** Reads `context` as the app does with `app.node.getAllContext()`, with the queues declared in functions/. */
function read(context: Record<string, unknown>) {
  return stackConfigFromContext(context, queues);
}

describe('stackConfigFromContext', () => {
  it('deploys every declared queue with its own deploy options, and applies the stack-wide defaults', () => {
    // Act
    const config = read({});
    // Assess
    expect(config.queues.map((q) => [q.name, q.workQueue, q.file, q.deploy.modes, q.deploy.pull.rateMinutes, q.deploy.event.batchSize])).toEqual([
      ['partner-sync', 'boomerang.partner-sync', 'functions/partner-sync.ts', ['pull', 'event'], 2, 50],
      ['webhooks', 'boomerang.webhooks', 'functions/webhooks.ts', ['pull', 'event'], 1, 100],
    ]);
    expect(config).toMatchObject({ logRetentionDays: 30, broker: { kind: 'existing' }, network: undefined, environment: {} });
    expect(config.queues[1]?.timings).toEqual({ httpTimeoutMs: 10_000, safetyMarginMs: 3000 });
  });

  it('reads strings from `cdk -c` and JSON values from cdk.json alike', () => {
    // Act
    const config = read({ subnetIds: ['subnet-0123456789abcdef0', 'subnet-01234567'], securityGroupIds: 'sg-0123456789abcdef0', functionEnvironment: { DELAY_MODE: 'exact', HTTP_TIMEOUT_MS: '5000' }, createBroker: true });
    // Assess
    expect(config).toMatchObject({
      network: { subnetIds: ['subnet-0123456789abcdef0', 'subnet-01234567'], securityGroupIds: ['sg-0123456789abcdef0'] },
      environment: { DELAY_MODE: 'exact', HTTP_TIMEOUT_MS: '5000' },
      broker: { kind: 'create', instanceType: 'mq.t3.micro', engineVersion: '3.13' },
    });
    expect(config.queues[0]?.timings.httpTimeoutMs).toBe(5000);
  });

  it.each(Object.entries(MOVED_KEYS))('refuses the per-queue key %s, saying it is now %s in the queue\'s file', (key, where) => {
    expect(() => read({ [key]: '1' })).toThrow(`The context key "${key}" is gone: the stack deploys every queue declared in functions/, and each queue sets this as ${where} in its functions/<name>.ts`);
  });

  it('refuses a stack without queues', () => {
    expect(() => stackConfigFromContext({}, [])).toThrow('No queue is declared');
  });

  it.each([
    [{ createBroker: 'true', brokerEngineVersion: '4.2', brokerInstanceType: 'mq.m7g.medium' }, { kind: 'create', engineVersion: '4.2', instanceType: 'mq.m7g.medium' }],
    [{ createBroker: 'true', brokerEngineVersion: '4.3', brokerInstanceType: 'mq.m7g.large' }, { kind: 'create', engineVersion: '4.3', instanceType: 'mq.m7g.large' }],
    [{ createBroker: 'true', brokerInstanceType: 'mq.m5.large' }, { kind: 'create', engineVersion: '3.13', instanceType: 'mq.m5.large' }],
  ])('offers the engine and host of %j', (context, broker) => {
    // Act & Assess
    expect(read(context).broker).toEqual(broker);
  });

  it('knows every key the README and the synth usage list', () => {
    // Assess: a key added to the code but not to the list would be refused as unknown
    expect(() => read(Object.fromEntries(CONTEXT_KEYS.map((key) => [key, undefined])))).not.toThrow();
  });

  it('leaves the keys of CDK itself alone', () => {
    // Act & Assess: what `cdk synth` passes besides the user's keys
    expect(() => read({ 'aws:cdk:enable-path-metadata': true, 'aws:cdk:bundling-stacks': ['**'], '@aws-cdk/core:failSynthOnValidationErrors': false })).not.toThrow();
  });

  // Bad values, and since 13.7 (unknown keys, functionEnvironment through the functions' parsers,
  // stack-owned variables, a password in AMQP_URL, amq.* names), 13.6 (modes) and 9.7 (broker engine).
  it.each([
    ['value', { logRetentionDays: '31' }, "logRetentionDays must be one of CloudWatch's retention periods"],
    ['value', { createBroker: 'yes' }, 'createBroker must be one of true, false; got "yes"'],
    ['value', { subnetIds: 'subnet-0123456789abcdef0' }, 'subnetIds and securityGroupIds go together'],
    ['value', { subnetIds: 'subnet-a', securityGroupIds: 'sg-0123456789abcdef0' }, 'subnetIds must be subnet ids (subnet-0123456789abcdef0); got "subnet-a"'],
    ['value', { subnetIds: 'subnet-0123456789abcdef0', securityGroupIds: 'default' }, 'securityGroupIds must be security group ids (sg-0123456789abcdef0); got "default"'],
    ['value', { functionEnvironment: '{"MAX_RETRIES":8}' }, 'functionEnvironment must be a JSON object of strings'],
    ['13.7', { stackname: 'orders' }, 'Unknown context key "stackname" (did you mean stackName? keys are case-sensitive); the known keys are stackName, logRetentionDays,'],
    ['13.7', { pullRate: '5' }, 'Unknown context key "pullRate"; the known keys are'],
    ['13.7', { functionEnvironment: '{"CONNECT_TIMEOUT_MS":"abc"}' }, 'functionEnvironment: CONNECT_TIMEOUT_MS must be an integer from 100 to 120000; got "abc" (the functions of partner-sync would refuse to start with it)'],
    ['13.7', { functionEnvironment: '{"BREAKER_THRESHOLD":"-1"}' }, 'functionEnvironment: BREAKER_THRESHOLD must be an integer'],
    ['13.7', { functionEnvironment: '{"IDLE_TIMEOUT_MS":"2"}' }, 'functionEnvironment: IDLE_TIMEOUT_MS must be an integer from 10 to 60000; got "2"'],
    ['13.7', { functionEnvironment: '{"HTTP_TIMEOUT_MS":"soon"}' }, 'functionEnvironment: HTTP_TIMEOUT_MS must be an integer from 1 to 2147483647; got "soon"'],
    ['13.7', { functionEnvironment: '{"EXACT_DELAY_PREFIX":"amq.delay"}' }, 'functionEnvironment: EXACT_DELAY_PREFIX must not start with "amq."'],
    ['13.7', { functionEnvironment: '{"WORK_QUEUE":"orders"}' }, 'functionEnvironment must not set WORK_QUEUE: each queue names its work queue in its functions/<name>.ts (workQueue in defineQueue)'],
    ['13.7', { functionEnvironment: '{"PARKING_QUEUE":"orders.parked"}' }, 'functionEnvironment must not set PARKING_QUEUE: each queue names its parking lot in its functions/<name>.ts'],
    ['13.7', { functionEnvironment: '{"AMQP_VHOST":"prod"}' }, 'functionEnvironment must not set AMQP_VHOST'],
    ['13.7', { functionEnvironment: '{"AMQP_SECRET_ID":"other"}' }, 'functionEnvironment must not set AMQP_SECRET_ID'],
    ['13.7', { functionEnvironment: '{"POWERTOOLS_SERVICE_NAME":"x"}' }, 'functionEnvironment must not set POWERTOOLS_SERVICE_NAME'],
    ['13.7', { functionEnvironment: '{"AMQP_URL":"amqps://app:s3cret@b-1.mq.eu-west-1.amazonaws.com:5671"}' }, 'functionEnvironment must not hold a password in AMQP_URL (amqps://app:***@b-1.mq.eu-west-1.amazonaws.com:5671)'],
    ['13.7', { functionEnvironment: '{"AMQP_URL":"amqps://b-1.mq.eu-west-1.amazonaws.com:5671"}' }, 'functionEnvironment must not set AMQP_URL: the deployed functions connect with the BrokerSecretArn secret'],
    ['security', { functionEnvironment: '{"NODE_TLS_REJECT_UNAUTHORIZED":"0"}' }, 'functionEnvironment must not set NODE_TLS_REJECT_UNAUTHORIZED: with 0, Node checks no TLS certificate on any connection of the functions'],
    ['security', { functionEnvironment: '{"NODE_TLS_REJECT_UNAUTHORIZED":"1"}' }, 'functionEnvironment must not set NODE_TLS_REJECT_UNAUTHORIZED'],
    ['security', { functionEnvironment: '{"NODE_OPTIONS":"--require /tmp/hook.js"}' }, 'functionEnvironment must not set NODE_OPTIONS to "--require /tmp/hook.js": it can load code into every function before its handler (--require, --import) or weaken its TLS (--tls-min-v1.0, --tls-cipher-list). The one value accepted is --enable-source-maps'],
    ['security', { functionEnvironment: '{"NODE_OPTIONS":"--enable-source-maps --import=./x.mjs"}' }, 'functionEnvironment must not set NODE_OPTIONS to "--enable-source-maps --import=./x.mjs"'],
    ['security', { functionEnvironment: '{"IDEMPOTENCY_STORE":"redis://:s3cret@cache.internal:6379"}' }, 'functionEnvironment must not hold a password in IDEMPOTENCY_STORE (redis://:***@cache.internal:6379): it would be readable in the template and the function configuration'],
    ['security', { functionEnvironment: '{"IDEMPOTENCY_STORE":"rediss://default:s3cret@cache.internal:6380"}' }, 'functionEnvironment must not hold a password in IDEMPOTENCY_STORE (rediss://default:***@cache.internal:6380)'],
    ['security', { functionEnvironment: '{"IDEMPOTENCY_STORE":"redis://cache.internal:6379?password=s3cret"}' }, 'functionEnvironment must not hold a password in IDEMPOTENCY_STORE (redis://cache.internal:6379?password=***)'],
    ['security', { functionEnvironment: '{"IDEMPOTENCY_STORE":"redis://:s3cret@cache.internal:6379"}' }, 'Put the password in a Secrets Manager secret (the password alone, or {"password": "...", "username": "..."}), name it by its complete ARN with IDEMPOTENCY_STORE_SECRET_ID in functionEnvironment (or idempotency.storeSecretId in the queue\'s functions/<name>.ts), and remove the password from IDEMPOTENCY_STORE'],
    ['redis secret', { functionEnvironment: { IDEMPOTENCY_STORE: 'rediss://cache.internal:6380', IDEMPOTENCY_STORE_SECRET_ID: 'boomerang/redis' } }, 'The Redis password secret of partner-sync is "boomerang/redis"; deployed, it must be the secret\'s complete ARN'],
    ['redis secret', { functionEnvironment: { IDEMPOTENCY_STORE: 'rediss://cache.internal:6380', IDEMPOTENCY_STORE_SECRET_ID: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/redis' } }, 'must be the secret\'s complete ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>-AbCdEf'],
    ['redis secret', { functionEnvironment: { IDEMPOTENCY_STORE_SECRET_ID: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/redis-AbCdEf' } }, 'functionEnvironment: IDEMPOTENCY_STORE_SECRET_ID is set but IDEMPOTENCY_STORE is not'],
    ['redis secret', { functionEnvironment: { IDEMPOTENCY_STORE: 'dynamodb:orders-idem', IDEMPOTENCY_STORE_SECRET_ID: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/redis-AbCdEf' } }, 'functionEnvironment: IDEMPOTENCY_STORE_SECRET_ID names a Redis password secret (arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/redis-AbCdEf), but IDEMPOTENCY_STORE is a DynamoDB table (dynamodb:orders-idem)'],
    ['redis secret', { functionEnvironment: { IDEMPOTENCY_STORE: 'rediss://app@cache.internal:6380?password=s3cret', IDEMPOTENCY_STORE_SECRET_ID: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/redis-AbCdEf' } }, 'functionEnvironment must not hold a password in IDEMPOTENCY_STORE (rediss://app@cache.internal:6380?password=***)'],
    ['9.7 broker', { createBroker: 'true', brokerEngineVersion: '4.2' }, 'brokerInstanceType mq.t3.micro (the default brokerInstanceType) cannot run brokerEngineVersion 4.2: Amazon MQ runs RabbitMQ 4.2 on mq.m7g hosts only. Set brokerInstanceType to one of those (for example mq.m7g.medium), or choose another brokerEngineVersion (3.13).'],
    ['9.7 broker', { createBroker: 'true', brokerEngineVersion: '4.3', brokerInstanceType: 'mq.t3.micro' }, 'brokerInstanceType mq.t3.micro cannot run brokerEngineVersion 4.3: Amazon MQ runs RabbitMQ 4.3 on mq.m7g hosts only'],
    ['9.7 broker', { createBroker: 'true', brokerEngineVersion: '4.3', brokerInstanceType: 'mq.m5.large' }, 'brokerInstanceType mq.m5.large cannot run brokerEngineVersion 4.3'],
    ['9.7 broker', { createBroker: 'true', brokerEngineVersion: '4.0' }, 'brokerEngineVersion must be one of 3.13, 4.2, 4.3; got "4.0"'],
    ['9.7 broker', { createBroker: 'true', brokerInstanceType: 'm7g.medium' }, 'brokerInstanceType must be an Amazon MQ host instance type such as mq.m7g.medium; got "m7g.medium"'],
    ['9.7 broker', { brokerEngineVersion: '4.3' }, 'brokerEngineVersion is set, but the stack creates no broker (createBroker=true does)'],
  ])('rejects (%s) %j, naming the key and what to do', (_topic, context, message) => {
    // Act & Assess
    expect(() => read(context)).toThrow(ConfigError);
    expect(() => read(context)).toThrow(message);
  });

  it.each([
    ['NODE_OPTIONS=--enable-source-maps, the way docs/deploy.md gives for file-and-line traces', { NODE_OPTIONS: '--enable-source-maps' }],
    ['NODE_OPTIONS=--enable-source-maps with spaces around it', { NODE_OPTIONS: ' --enable-source-maps ' }],
    ['a Redis store without a password', { IDEMPOTENCY_STORE: 'rediss://cache.internal:6380' }],
    ['a Redis store with a user and no password', { IDEMPOTENCY_STORE: 'redis://app@cache.internal:6379' }],
  ])('accepts %s', (_name, functionEnvironment) => {
    // Act & Assess
    expect(read({ functionEnvironment }).environment).toEqual(functionEnvironment);
  });

  it('lets every queue read the Redis password secret that functionEnvironment names by its complete ARN', () => {
    // Prepare
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/redis-AbCdEf';
    // Act
    const config = read({ functionEnvironment: { IDEMPOTENCY_STORE: 'rediss://cache.internal:6380', IDEMPOTENCY_STORE_SECRET_ID: arn } });
    // Assess
    expect(config.queues.map((q) => q.storeSecretArn)).toEqual([arn, arn]);
    expect(read({}).queues.map((q) => q.storeSecretArn)).toEqual([undefined, undefined]);
  });

  it('never repeats the password of an IDEMPOTENCY_STORE in its error', () => {
    // Act
    const messages = ['redis://:s3cret@cache:6379', 'redis://cache:6379?db=1&password=s3cret'].map((url) => {
      try {
        read({ functionEnvironment: { IDEMPOTENCY_STORE: url } });
      } catch (caught) {
        return (caught as Error).message;
      }
      return '';
    });
    // Assess
    for (const message of messages) {
      expect(message).toMatch(/password in IDEMPOTENCY_STORE/);
      expect(message).not.toContain('s3cret');
    }
  });

  it('never repeats the password of an AMQP_URL in its error', () => {
    // Act
    const error = (() => {
      try {
        read({ functionEnvironment: { AMQP_URL: 'amqp://app:s3cret@host-a,amqp://app:s3cret@host-b' } });
      } catch (caught) {
        return caught as Error;
      }
      return undefined;
    })();
    // Assess
    expect(error?.message).toMatch(/password in AMQP_URL/);
    expect(error?.message).not.toContain('s3cret');
  });
});
