import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkFunctionEnvironment } from '../../shared/cdk/function-environment.js';
import { ConfigError } from '../../shared/errors.js';
import { loadDeclaredQueues } from '../../shared/queues/declared-queues.js';
import { tempFunctionsDir, writeQueueFile } from '../fixtures/queue-files.js';
import { SYNTH_TIMEOUT_MS, type Synthesized, synthesize } from '../fixtures/synth.js';
import { statementsOf } from '../fixtures/template.js';

let synth: Synthesized;

/** The secret `cache` names for its Redis password (test/fixtures/queue-templates/orders-redis-secret.ts.template). */
const REDIS_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/redis-AbCdEf';

// One synth for the file: `orders` asks for the stack's idempotency table (both modes), `cache` is on a
// Redis server whose password is in a secret (both modes), `plain` has no idempotency.
beforeAll(async () => {
  const functions = tempFunctionsDir();
  try {
    writeQueueFile(functions.dir, { template: 'orders-idempotent', name: 'orders', workQueue: 'orders' });
    writeQueueFile(functions.dir, { template: 'orders-redis-secret', name: 'cache', workQueue: 'cache' });
    writeQueueFile(functions.dir, { template: 'orders-pull', name: 'plain', workQueue: 'plain' });
    synth = synthesize({ stackName: 'Shop' }, functions.dir);
  } finally {
    functions.remove();
  }
}, SYNTH_TIMEOUT_MS);

/** The logical id of the one idempotency table. */
function tableId(): string {
  const tables = Object.keys(synth.template.findResources('AWS::DynamoDB::Table'));
  expect(tables).toHaveLength(1);
  return tables[0] as string;
}

describe('BoomerangStack with a queue that asks for an idempotency table', () => {
  it('passes cdk-nag AwsSolutions and the CloudFormation checks', () => {
    // Assess
    expect(synth.findings).toEqual([]);
  });

  it('creates one table, for that queue only: key `id`, TTL on `expiration`, on demand, point-in-time recovery', () => {
    // Assess
    synth.template.resourceCountIs('AWS::DynamoDB::Table', 1);
    expect(tableId()).toMatch(/^OrdersIdempotency/);
    synth.template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      TimeToLiveSpecification: { AttributeName: 'expiration', Enabled: true },
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  it.each(['OrdersPull', 'OrdersEvent'])('points %s at the table and lets it make the four item calls on it, nothing more', (prefix) => {
    // Assess
    synth.template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: `Shop-orders-${prefix === 'OrdersPull' ? 'pull' : 'event'}`,
      Environment: { Variables: Match.objectLike({ IDEMPOTENCY_STORE: { 'Fn::Join': ['', ['dynamodb:', { Ref: tableId() }]] } }) },
    });
    const onTable = statementsOf(synth.template, `${prefix}Role`).filter((s) => JSON.stringify(s.Resource).includes(tableId()));
    expect(onTable).toEqual([
      {
        Action: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [tableId(), 'Arn'] },
      },
    ]);
  });

  it('gives the queue that did not ask neither the table, its grants, nor IDEMPOTENCY_STORE', () => {
    // Assess
    const statements = statementsOf(synth.template, 'PlainPullRole');
    expect(JSON.stringify(statements)).not.toContain('dynamodb');
    const [plain] = Object.values(synth.template.findResources('AWS::Lambda::Function', { Properties: { FunctionName: 'Shop-plain-pull' } }));
    expect(plain?.Properties.Environment.Variables).not.toHaveProperty('IDEMPOTENCY_STORE');
  });
});

describe('BoomerangStack with a queue on Redis whose password is in a secret', () => {
  it.each(['CachePull', 'CacheEvent'])("lets %s read that secret, and the broker's, and no other", (prefix) => {
    // Assess
    const reads = statementsOf(synth.template, `${prefix}Role`).filter((s) => JSON.stringify(s.Action).includes('secretsmanager'));
    expect(reads).toEqual([
      { Action: 'secretsmanager:GetSecretValue', Effect: 'Allow', Resource: { Ref: 'BrokerSecretArn' } },
      { Action: 'secretsmanager:GetSecretValue', Effect: 'Allow', Resource: REDIS_SECRET_ARN },
    ]);
  });

  it.each(['OrdersPull', 'OrdersEvent', 'PlainPull', 'CacheRetention'])('gives %s no read of the Redis secret', (prefix) => {
    // Assess
    const roles = Object.keys(synth.template.findResources('AWS::IAM::Role')).filter((id) => id.startsWith(`${prefix}Role`));
    expect(roles).toHaveLength(1);
    for (const role of roles) expect(JSON.stringify(statementsOf(synth.template, role))).not.toContain(REDIS_SECRET_ARN);
  });

  it('puts no password in the template: the secret is named in the grants only, and no function holds a Redis URL', () => {
    // Assess
    const functions = Object.values(synth.template.findResources('AWS::Lambda::Function'));
    for (const fn of functions) expect(JSON.stringify(fn.Properties.Environment)).not.toMatch(/rediss?:\/\/|IDEMPOTENCY_STORE_SECRET_ID/);
    const mentions = Object.entries(synth.template.toJSON().Resources as Record<string, { Type: string }>).filter(([, resource]) =>
      JSON.stringify(resource).includes(REDIS_SECRET_ARN),
    );
    expect(new Set(mentions.map(([, resource]) => resource.Type))).toEqual(new Set(['AWS::IAM::Role']));
  });
});

describe("Function: checkFunctionEnvironment for a queue with the stack's table", () => {
  it('refuses IDEMPOTENCY_STORE in functionEnvironment, which would point its functions elsewhere', async () => {
    // Prepare
    const functions = tempFunctionsDir();
    try {
      writeQueueFile(functions.dir, { template: 'orders-idempotent', name: 'orders', workQueue: 'orders' });
      const [queue] = await loadDeclaredQueues({ dir: functions.dir });
      // Act
      const act = () => checkFunctionEnvironment(queue as NonNullable<typeof queue>, { IDEMPOTENCY_STORE: 'redis://cache:6379' });
      // Assess
      expect(act).toThrow(ConfigError);
      expect(act).toThrow("functionEnvironment must not set IDEMPOTENCY_STORE: orders asks for the stack's idempotency table");
      expect(checkFunctionEnvironment(queue as NonNullable<typeof queue>, {}).timings.safetyMarginMs).toBe(3000);
    } finally {
      functions.remove();
    }
  });
});
