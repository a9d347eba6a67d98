import { describe, expect, it } from 'vitest';
import { CONTEXT_DEFAULTS, stackConfigFromContext } from '../../infra/stack-config.js';
import { ConfigError } from '../../shared/errors.js';

/** Reads `context` as `app.node.tryGetContext` would. */
function read(context: Record<string, unknown>) {
  return stackConfigFromContext((key) => context[key]);
}

describe('stackConfigFromContext', () => {
  it('applies the defaults when no context is given', () => {
    // Act
    const config = read({});
    // Assess
    expect(config).toMatchObject({
      workQueue: CONTEXT_DEFAULTS.workQueue,
      parkingQueue: undefined,
      virtualHost: '/',
      pull: { rateMinutes: 1, reservedConcurrency: 1, timeoutSeconds: 60, memoryMb: 256 },
      event: { batchSize: 100, batchWindowSeconds: undefined, timeoutSeconds: 60, memoryMb: 256 },
      logRetentionDays: 30,
      broker: { kind: 'existing' },
      network: undefined,
      environment: {},
    });
  });

  it('reads strings from `cdk -c` and JSON values from cdk.json alike', () => {
    // Act
    const config = read({ pullRateMinutes: 10, eventBatchSize: '500', subnetIds: ['subnet-0123456789abcdef0', 'subnet-01234567'], securityGroupIds: 'sg-0123456789abcdef0', functionEnvironment: { DELAY_MODE: 'exact' }, createBroker: true });
    // Assess
    expect(config).toMatchObject({
      pull: { rateMinutes: 10 },
      event: { batchSize: 500 },
      network: { subnetIds: ['subnet-0123456789abcdef0', 'subnet-01234567'], securityGroupIds: ['sg-0123456789abcdef0'] },
      environment: { DELAY_MODE: 'exact' },
      broker: { kind: 'create', instanceType: 'mq.t3.micro', engineVersion: '3.13' },
    });
  });

  it.each([
    [{ pullRateMinutes: '0' }, 'pullRateMinutes must be an integer from 1 to 1440; got "0"'],
    [{ eventBatchSize: '20000' }, 'eventBatchSize must be an integer from 1 to 10000; got "20000"'],
    [{ eventBatchWindowSeconds: '301' }, 'eventBatchWindowSeconds must be an integer from 0 to 300; got "301"'],
    [{ logRetentionDays: '31' }, "logRetentionDays must be one of CloudWatch's retention periods"],
    [{ createBroker: 'yes' }, 'createBroker must be one of true, false; got "yes"'],
    [{ subnetIds: 'subnet-0123456789abcdef0' }, 'subnetIds and securityGroupIds go together'],
    [{ subnetIds: 'subnet-a', securityGroupIds: 'sg-0123456789abcdef0' }, 'subnetIds must be subnet ids (subnet-0123456789abcdef0); got "subnet-a"'],
    [{ subnetIds: 'subnet-0123456789abcdef0', securityGroupIds: 'default' }, 'securityGroupIds must be security group ids (sg-0123456789abcdef0); got "default"'],
    [{ functionEnvironment: '{"MAX_RETRIES":8}' }, 'functionEnvironment must be a JSON object of strings'],
  ])('rejects %j, naming the key', (context, message) => {
    // Act & Assess
    expect(() => read(context)).toThrow(ConfigError);
    expect(() => read(context)).toThrow(message);
  });
});
