import { describe, expect, it } from 'vitest';
import { CONTEXT_KEYS, MOVED_KEYS } from '../../infra/context-keys.js';
import { stackConfigFromContext } from '../../infra/stack-config.js';
import { ConfigError } from '../../shared/errors.js';

/** Reads `context` as the app does with `app.node.getAllContext()`. */
function read(context: Record<string, unknown>) {
  return stackConfigFromContext(context);
}

describe('stackConfigFromContext', () => {
  it('applies the stack-wide defaults, and leaves the queues to the construct', () => {
    // Act
    const config = read({});
    // Assess
    expect(config).toEqual({ logRetention: 30, alarmTopicArn: undefined, createBroker: undefined, network: undefined, functionEnvironment: {} });
  });

  it('reads strings from `cdk -c` and JSON values from cdk.json alike', () => {
    // Act
    const config = read({
      subnetIds: ['subnet-0123456789abcdef0', 'subnet-01234567'],
      securityGroupIds: 'sg-0123456789abcdef0',
      functionEnvironment: { DELAY_MODE: 'exact', HTTP_TIMEOUT_MS: '5000' },
      createBroker: true,
      logRetentionDays: 14,
    });
    // Assess
    expect(config).toEqual({
      logRetention: 14,
      alarmTopicArn: undefined,
      network: { subnetIds: ['subnet-0123456789abcdef0', 'subnet-01234567'], securityGroupIds: ['sg-0123456789abcdef0'] },
      functionEnvironment: { DELAY_MODE: 'exact', HTTP_TIMEOUT_MS: '5000' },
      createBroker: { instanceType: undefined, engineVersion: undefined },
    });
  });

  it.each(Object.entries(MOVED_KEYS))("refuses the per-queue key %s, saying it is now %s in the queue's file", (key, where) => {
    expect(() => read({ [key]: '1' })).toThrow(
      `The context key "${key}" is gone: the stack deploys every queue declared in functions/, and each queue sets this as ${where} in its functions/<name>.ts`,
    );
  });

  it.each([
    [
      { createBroker: 'true', brokerEngineVersion: '4.2', brokerInstanceType: 'mq.m7g.medium' },
      { engineVersion: '4.2', instanceType: 'mq.m7g.medium' },
    ],
    [
      { createBroker: 'true', brokerEngineVersion: '4.3', brokerInstanceType: 'mq.m7g.large' },
      { engineVersion: '4.3', instanceType: 'mq.m7g.large' },
    ],
    [
      { createBroker: 'true', brokerInstanceType: 'mq.m5.large' },
      { engineVersion: undefined, instanceType: 'mq.m5.large' },
    ],
  ])('offers the engine and host of %j', (context, createBroker) => {
    // Act & Assess
    expect(read(context).createBroker).toEqual(createBroker);
  });

  it('knows every key the README and the synth usage list', () => {
    // Assess: a key added to the code but not to the list would be refused as unknown
    expect(() => read(Object.fromEntries(CONTEXT_KEYS.map((key) => [key, undefined])))).not.toThrow();
  });

  it('leaves the keys of CDK itself alone', () => {
    // Act & Assess: what `cdk synth` passes besides the user's keys
    expect(() =>
      read({ 'aws:cdk:enable-path-metadata': true, 'aws:cdk:bundling-stacks': ['**'], '@aws-cdk/core:failSynthOnValidationErrors': false }),
    ).not.toThrow();
  });

  // Bad values, unknown keys (13.7) and the broker's engine (9.7), named as the context names them;
  // functionEnvironment against each queue is the construct's check (cdk-function-environment.test.ts).
  it.each([
    ['value', { logRetentionDays: '31' }, "logRetentionDays must be one of CloudWatch's retention periods"],
    ['value', { createBroker: 'yes' }, 'createBroker must be one of true, false; got "yes"'],
    ['value', { subnetIds: 'subnet-0123456789abcdef0' }, 'subnetIds and securityGroupIds go together'],
    ['value', { subnetIds: 'subnet-a', securityGroupIds: 'sg-0123456789abcdef0' }, 'subnetIds must be subnet ids (subnet-0123456789abcdef0); got "subnet-a"'],
    [
      'value',
      { subnetIds: 'subnet-0123456789abcdef0', securityGroupIds: 'default' },
      'securityGroupIds must be security group ids (sg-0123456789abcdef0); got "default"',
    ],
    ['value', { functionEnvironment: '{"MAX_RETRIES":8}' }, 'functionEnvironment must be a JSON object of strings'],
    [
      '13.7',
      { stackname: 'orders' },
      'Unknown context key "stackname" (did you mean stackName? keys are case-sensitive); the known keys are stackName, logRetentionDays,',
    ],
    ['13.7', { pullRate: '5' }, 'Unknown context key "pullRate"; the known keys are'],
    [
      '9.7 broker',
      { createBroker: 'true', brokerEngineVersion: '4.2' },
      'brokerInstanceType mq.t3.micro (the default brokerInstanceType) cannot run brokerEngineVersion 4.2: Amazon MQ runs RabbitMQ 4.2 on mq.m7g hosts only. Set brokerInstanceType to one of those (for example mq.m7g.medium), or choose another brokerEngineVersion (3.13).',
    ],
    [
      '9.7 broker',
      { createBroker: 'true', brokerEngineVersion: '4.3', brokerInstanceType: 'mq.t3.micro' },
      'brokerInstanceType mq.t3.micro cannot run brokerEngineVersion 4.3: Amazon MQ runs RabbitMQ 4.3 on mq.m7g hosts only',
    ],
    [
      '9.7 broker',
      { createBroker: 'true', brokerEngineVersion: '4.3', brokerInstanceType: 'mq.m5.large' },
      'brokerInstanceType mq.m5.large cannot run brokerEngineVersion 4.3',
    ],
    ['9.7 broker', { createBroker: 'true', brokerEngineVersion: '4.0' }, 'brokerEngineVersion must be one of 3.13, 4.2, 4.3; got "4.0"'],
    [
      '9.7 broker',
      { createBroker: 'true', brokerInstanceType: 'm7g.medium' },
      'brokerInstanceType must be an Amazon MQ host instance type such as mq.m7g.medium; got "m7g.medium"',
    ],
    ['9.7 broker', { brokerEngineVersion: '4.3' }, 'brokerEngineVersion is set, but the stack creates no broker (createBroker=true does)'],
  ])('rejects (%s) %j, naming the key and what to do', (_topic, context, message) => {
    // Act & Assess
    expect(() => read(context)).toThrow(ConfigError);
    expect(() => read(context)).toThrow(message);
  });

  it('accepts any functionEnvironment of strings: the construct checks it against each queue', () => {
    // Act & Assess
    expect(read({ functionEnvironment: { NODE_OPTIONS: '--enable-source-maps', LOG_LEVEL: 'debug' } }).functionEnvironment).toEqual({
      NODE_OPTIONS: '--enable-source-maps',
      LOG_LEVEL: 'debug',
    });
  });
});
