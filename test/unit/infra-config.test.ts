import { describe, expect, it } from 'vitest';
import { CONTEXT_KEYS } from '../../infra/context-keys.js';
import { CONTEXT_DEFAULTS, stackConfigFromContext } from '../../infra/stack-config.js';
import { ConfigError } from '../../shared/errors.js';

/** Reads `context` as the app does with `app.node.getAllContext()`. */
function read(context: Record<string, unknown>) {
  return stackConfigFromContext(context);
}

describe('stackConfigFromContext', () => {
  it('applies the defaults when no context is given: one queue, served by the pull function only', () => {
    // Act
    const config = read({});
    // Assess
    expect(config).toMatchObject({
      queue: { workQueue: CONTEXT_DEFAULTS.workQueue, parkingQueue: undefined, virtualHost: '/', modes: ['pull'] },
      pull: { rateMinutes: 1, reservedConcurrency: 1, timeoutSeconds: 60, memoryMb: 256 },
      event: { batchSize: 100, batchWindowSeconds: undefined, timeoutSeconds: 60, memoryMb: 256 },
      logRetentionDays: 30,
      broker: { kind: 'existing' },
      network: undefined,
      environment: {},
      timings: { httpTimeoutMs: 10_000, safetyMarginMs: 3000 },
    });
  });

  it('reads strings from `cdk -c` and JSON values from cdk.json alike', () => {
    // Act
    const config = read({ modes: ['event'], eventBatchSize: '500', subnetIds: ['subnet-0123456789abcdef0', 'subnet-01234567'], securityGroupIds: 'sg-0123456789abcdef0', functionEnvironment: { DELAY_MODE: 'exact', HTTP_TIMEOUT_MS: '5000' }, createBroker: true });
    // Assess
    expect(config).toMatchObject({
      queue: { modes: ['event'] },
      event: { batchSize: 500 },
      network: { subnetIds: ['subnet-0123456789abcdef0', 'subnet-01234567'], securityGroupIds: ['sg-0123456789abcdef0'] },
      environment: { DELAY_MODE: 'exact', HTTP_TIMEOUT_MS: '5000' },
      broker: { kind: 'create', instanceType: 'mq.t3.micro', engineVersion: '3.13' },
      timings: { httpTimeoutMs: 5000 },
    });
  });

  it.each([
    [{ modes: 'pull,event', acknowledgeCompetingModes: 'true' }, ['pull', 'event']],
    [{ modes: 'event,pull', acknowledgeCompetingModes: true }, ['pull', 'event']],
    [{ modes: ' event ' }, ['event']],
  ])('reads modes from %j', (context, modes) => {
    // Act & Assess
    expect(read(context).queue.modes).toEqual(modes);
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
    ['value', { pullRateMinutes: '0' }, 'pullRateMinutes must be an integer from 1 to 1440; got "0"'],
    ['value', { modes: 'event', eventBatchSize: '20000' }, 'eventBatchSize must be an integer from 1 to 10000; got "20000"'],
    ['value', { modes: 'event', eventBatchWindowSeconds: '301' }, 'eventBatchWindowSeconds must be an integer from 0 to 300; got "301"'],
    ['value', { logRetentionDays: '31' }, "logRetentionDays must be one of CloudWatch's retention periods"],
    ['value', { createBroker: 'yes' }, 'createBroker must be one of true, false; got "yes"'],
    ['value', { subnetIds: 'subnet-0123456789abcdef0' }, 'subnetIds and securityGroupIds go together'],
    ['value', { subnetIds: 'subnet-a', securityGroupIds: 'sg-0123456789abcdef0' }, 'subnetIds must be subnet ids (subnet-0123456789abcdef0); got "subnet-a"'],
    ['value', { subnetIds: 'subnet-0123456789abcdef0', securityGroupIds: 'default' }, 'securityGroupIds must be security group ids (sg-0123456789abcdef0); got "default"'],
    ['value', { functionEnvironment: '{"MAX_RETRIES":8}' }, 'functionEnvironment must be a JSON object of strings'],
    ['13.7', { workqueue: 'orders' }, 'Unknown context key "workqueue" (did you mean workQueue? keys are case-sensitive); the known keys are stackName, workQueue,'],
    ['13.7', { pullRate: '5' }, 'Unknown context key "pullRate"; the known keys are'],
    ['13.7', { functionEnvironment: '{"MAX_RETRIES":"abc"}' }, 'functionEnvironment: MAX_RETRIES must be an integer from 0 to 1000; got "abc"'],
    ['13.7', { functionEnvironment: '{"BACKOFF_JITTER":"2"}' }, 'functionEnvironment: BACKOFF_JITTER must be a number from 0 to 0.99; got "2"'],
    ['13.7', { functionEnvironment: '{"RETRY_RULES":"[{\\"retry\\":1}]"}' }, 'functionEnvironment: Expected `retry`'],
    ['13.7', { functionEnvironment: '{"HTTP_TIMEOUT_MS":"soon"}' }, 'functionEnvironment: HTTP_TIMEOUT_MS must be an integer from 1 to 2147483647; got "soon"'],
    ['13.7', { functionEnvironment: '{"EXACT_DELAY_PREFIX":"amq.delay"}' }, 'functionEnvironment: EXACT_DELAY_PREFIX must not start with "amq."'],
    ['13.7', { functionEnvironment: '{"WORK_QUEUE":"orders"}' }, 'functionEnvironment must not set WORK_QUEUE: the stack sets it from the workQueue context key, which also names the queue of the event source mapping: set -c workQueue=<queue> instead'],
    ['13.7', { functionEnvironment: '{"AMQP_VHOST":"prod"}' }, 'functionEnvironment must not set AMQP_VHOST'],
    ['13.7', { functionEnvironment: '{"AMQP_SECRET_ID":"other"}' }, 'functionEnvironment must not set AMQP_SECRET_ID'],
    ['13.7', { functionEnvironment: '{"POWERTOOLS_SERVICE_NAME":"x"}' }, 'functionEnvironment must not set POWERTOOLS_SERVICE_NAME'],
    ['13.7', { functionEnvironment: '{"AMQP_URL":"amqps://app:s3cret@b-1.mq.eu-west-1.amazonaws.com:5671"}' }, 'functionEnvironment must not hold a password in AMQP_URL (amqps://app:***@b-1.mq.eu-west-1.amazonaws.com:5671)'],
    ['13.7', { functionEnvironment: '{"AMQP_URL":"amqps://b-1.mq.eu-west-1.amazonaws.com:5671"}' }, 'functionEnvironment must not set AMQP_URL: the deployed functions connect with the BrokerSecretArn secret'],
    ['13.7', { workQueue: 'amq.orders' }, 'workQueue: WORK_QUEUE must not start with "amq." (reserved by the broker); got "amq.orders"'],
    ['13.7', { parkingQueue: 'amq.parked' }, 'parkingQueue: PARKING_QUEUE must not start with "amq."'],
    ['13.7', { workQueue: 'orders', parkingQueue: 'orders' }, 'parkingQueue: PARKING_QUEUE must differ from WORK_QUEUE'],
    ['13.6 modes', { modes: 'pull,event' }, 'modes=pull,event deploys both functions on "boomerang.work", and they compete for its messages'],
    ['13.6 modes', { modes: 'poll' }, 'modes must be pull, event, or pull,event; got "poll"'],
    ['13.6 modes', { modes: 'pull', acknowledgeCompetingModes: 'true' }, 'acknowledgeCompetingModes applies only with modes=pull,event'],
    ['13.6 modes', { modes: 'event', pullRateMinutes: '5' }, 'pullRateMinutes is set, but modes does not include pull'],
    ['13.6 modes', { eventBatchSize: '50' }, 'eventBatchSize is set, but modes does not include event'],
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
