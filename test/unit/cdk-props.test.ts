import { join } from 'node:path';
import { App, CfnParameter, Stack } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { describe, expect, it } from 'vitest';
import { BoomerangQueues, type BoomerangQueuesProps } from '../../shared/cdk/index.js';
import { ConfigError } from '../../shared/errors.js';
import { REPO_ROOT } from '../fixtures/queue-files.js';
import { SKIP_BUNDLING } from '../fixtures/synth.js';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/broker-AbCdEf';
const HOST = 'b-1234abcd.mq.eu-west-1.amazonaws.com';
const WEBHOOKS = join(REPO_ROOT, 'functions/webhooks.ts');

/** A limit, not a measurement: the cases that get as far as the definitions start a child process. */
const CHILD_TIMEOUT_MS = 60_000;

/** Builds the construct with `props` over the webhooks queue (both modes) in a fresh stack; returns what it threw. */
function construct(props: (stack: Stack) => Partial<BoomerangQueuesProps>, stackName = 'Shop'): Error | undefined {
  const stack = new Stack(new App({ context: SKIP_BUNDLING }), stackName);
  try {
    new BoomerangQueues(stack, 'Queues', {
      files: [WEBHOOKS],
      brokerSecret: SECRET_ARN,
      brokerHost: HOST,
      brokerArn: 'arn:aws:mq:eu-west-1:123456789012:broker:shop:b-1',
      ...props(stack),
    } as BoomerangQueuesProps);
  } catch (error) {
    return error as Error;
  }
  return undefined;
}

describe('Class: BoomerangQueues, its props', () => {
  it.each<[string, (stack: Stack) => Partial<BoomerangQueuesProps>, string]>([
    ['both sources', () => ({ functionsDir: 'functions' }), 'functionsDir and files are two ways to name the queue files: give one of them'],
    ['no file', () => ({ files: [] }), 'files must be a non-empty list of queue files'],
    ['no secret', () => ({ brokerSecret: undefined }), 'brokerSecret is required'],
    [
      'a partial secret ARN',
      () => ({ brokerSecret: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/broker' }),
      "brokerSecret must be the secret's complete ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>-AbCdEf); got",
    ],
    [
      'a secret imported by name',
      (stack) => ({ brokerSecret: Secret.fromSecretNameV2(stack, 'ByName', 'boomerang/broker') }),
      'brokerSecret must know its complete ARN',
    ],
    ['no host', () => ({ brokerHost: undefined }), "brokerHost is required (the broker's AMQPS host name), unless createBroker makes one"],
    [
      'a URL for a host',
      () => ({ brokerHost: 'amqps://b-1.mq.eu-west-1.amazonaws.com:5671' }),
      "brokerHost must be the broker's host name, without scheme or port",
    ],
    ['a bad broker ARN', () => ({ brokerArn: 'b-1234abcd' }), 'brokerArn must be an Amazon MQ broker ARN'],
    [
      'a host with createBroker',
      () => ({ createBroker: {}, brokerArn: undefined }),
      'brokerHost is set, but createBroker makes the broker, which gives its own: remove brokerHost',
    ],
    [
      'an engine the default host cannot run',
      () => ({ createBroker: { engineVersion: '4.3' }, brokerHost: undefined, brokerArn: undefined }),
      'createBroker.instanceType mq.t3.micro (the default createBroker.instanceType) cannot run createBroker.engineVersion 4.3',
    ],
    [
      'an engine Amazon MQ does not offer',
      () => ({ createBroker: { engineVersion: '4.0' as '4.3' }, brokerHost: undefined, brokerArn: undefined }),
      'createBroker.engineVersion must be one of 3.13, 4.2, 4.3; got "4.0"',
    ],
    [
      'subnets without groups',
      () => ({ network: { subnetIds: ['subnet-0123456789abcdef0'], securityGroupIds: [] } }),
      'network.subnetIds and network.securityGroupIds go together',
    ],
    [
      'a bad subnet id',
      () => ({ network: { subnetIds: ['subnet-a'], securityGroupIds: ['sg-0123456789abcdef0'] } }),
      'network.subnetIds must be subnet ids (subnet-0123456789abcdef0); got "subnet-a"',
    ],
    ['a retention CloudWatch lacks', () => ({ logRetention: 31 as RetentionDays }), "logRetention must be one of CloudWatch's retention periods"],
    [
      'a number in functionEnvironment',
      () => ({ functionEnvironment: { MAX_RETRIES: 8 } as unknown as Record<string, string> }),
      'functionEnvironment must be an object of strings',
    ],
    ['a space in the prefix', () => ({ functionNamePrefix: 'my shop' }), 'functionNamePrefix must be letters, digits, hyphens and underscores'],
  ])('refuses %s before it reads a queue, naming the prop', (_what, props, message) => {
    // Act
    const error = construct(props);
    // Assess
    expect(error).toBeInstanceOf(ConfigError);
    expect(error?.message).toContain(message);
  });

  it.each<[string, (stack: Stack) => Partial<BoomerangQueuesProps>, string]>([
    [
      'no broker ARN for a queue that deploys its event function',
      () => ({ brokerArn: undefined }),
      "brokerArn is required: webhooks deploys its event function (functions/webhooks.ts), whose event source mapping reads the broker's ARN",
    ],
    [
      'a function name longer than Lambda takes',
      () => ({ functionNamePrefix: 'x'.repeat(50) }),
      `The function name ${'x'.repeat(50)}-webhooks-topology is 68 characters; Lambda allows 64: shorten functionNamePrefix`,
    ],
    [
      'a functionEnvironment the functions would refuse',
      () => ({ functionEnvironment: { CONNECT_TIMEOUT_MS: 'soon' } }),
      'functionEnvironment: CONNECT_TIMEOUT_MS must be an integer from 100 to 120000; got "soon" (the functions of webhooks would refuse to start with it)',
    ],
  ])(
    'refuses %s once it has read the queues, naming the prop',
    (_what, props, message) => {
      // Act
      const error = construct(props);
      // Assess
      expect(error).toBeInstanceOf(ConfigError);
      expect(error?.message).toContain(message);
    },
    CHILD_TIMEOUT_MS,
  );

  it(
    'takes an ISecret that knows its complete ARN, and tokens (parameters) for the host and ARN as they are',
    () => {
      // Act
      const error = construct((stack) => ({
        brokerSecret: Secret.fromSecretCompleteArn(stack, 'Secret', SECRET_ARN),
        brokerHost: new CfnParameter(stack, 'Host').valueAsString,
        brokerArn: new CfnParameter(stack, 'Arn').valueAsString,
        logRetention: RetentionDays.ONE_WEEK,
      }));
      // Assess
      expect(error).toBeUndefined();
    },
    CHILD_TIMEOUT_MS,
  );
});
