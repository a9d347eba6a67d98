/**
 * The construct's operator function (issue 30): one per construct, in the broker's network, reading the
 * broker secret only, no Function URL and no resource policy, invoked by whom `grantOperate` names
 * (`lambda:InvokeFunction` on that one function); cdk-nag AwsSolutions clean.
 */
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { AccountRootPrincipal, Role } from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { BoomerangQueues } from '../../shared/cdk/index.js';
import { operatorEntry } from '../../shared/cdk/operator-function.js';
import { REPO_ROOT } from '../fixtures/queue-files.js';
import { SKIP_BUNDLING, SYNTH_TIMEOUT_MS, type Synthesized, synthesizeStack } from '../fixtures/synth.js';
import { statementsOf } from '../fixtures/template.js';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/broker-AbCdEf';
const BROKER_HOST = 'b-1234abcd-0000-0000-0000-000000000000.mq.eu-west-1.amazonaws.com';
const EXAMPLES = ['functions/partner-sync.ts', 'functions/webhooks.ts'].map((file) => join(REPO_ROOT, file));
const BROKER_ARN = 'arn:aws:mq:eu-west-1:123456789012:broker:shop:b-1234abcd-0000-0000-0000-000000000000';
const NETWORK = { subnetIds: ['subnet-0123456789abcdef0'], securityGroupIds: ['sg-0123456789abcdef0'] };

describe('operatorEntry', () => {
  it('imports every declared queue, each connecting to its own vhost, for createOperatorConsoleFunction', () => {
    // Act
    const entry = operatorEntry([
      { name: 'orders', path: '/app/functions/orders.ts', deploy: { virtualHost: '/' } },
      { name: 'billing', path: '/app/functions/billing.ts', deploy: { virtualHost: 'billing' } },
    ]);
    // Assess
    expect(entry.name).toBe('operator');
    expect(entry.contents).toContain('import { queue as q0 } from "/app/functions/orders.ts";');
    expect(entry.contents).toContain('import { queue as q1 } from "/app/functions/billing.ts";');
    expect(entry.contents).toContain('q1.loadConfig({ ...env, AMQP_VHOST: "billing" }, mode)');
    expect(entry.contents).toMatch(/export const handler = createOperatorConsoleFunction\(\[\{ name: q0\.name, .*\}, \{ name: q1\.name, .*\}\]\);/);
  });
});

describe('Class: BoomerangQueues, its operator function', () => {
  let synth: Synthesized;

  beforeAll(() => {
    // Prepare: a team's stack in a VPC, and the operators' role granted the function
    const app = new App({ context: SKIP_BUNDLING });
    const stack = new Stack(app, 'Shop');
    const queues = new BoomerangQueues(stack, 'Queues', {
      files: EXAMPLES,
      brokerSecret: SECRET_ARN,
      brokerHost: BROKER_HOST,
      brokerArn: BROKER_ARN,
      network: NETWORK,
    });
    const operators = new Role(stack, 'Operators', { assumedBy: new AccountRootPrincipal() });
    queues.grantOperate(operators);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    synth = synthesizeStack(app, stack);
  }, SYNTH_TIMEOUT_MS);

  it('passes cdk-nag AwsSolutions, the grant included', () => {
    expect(synth.findings).toEqual([]);
  });

  it("is <prefix>-operator in the broker's network, with the broker settings of the other functions and Lambda's longest timeout", () => {
    synth.template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: 'Shop-operator',
      Handler: 'index.handler',
      Timeout: 900,
      VpcConfig: { SubnetIds: NETWORK.subnetIds, SecurityGroupIds: NETWORK.securityGroupIds },
      Environment: { Variables: Match.objectLike({ AMQP_SECRET_ID: SECRET_ARN, AMQP_HOST: BROKER_HOST, FUNCTION_NAME: 'Shop-operator' }) },
    });
    const outputs = Object.keys(synth.template.findOutputs('*'));
    expect(outputs.filter((id) => /^QueuesOperatorFunction(Name|Arn)/.test(id))).toHaveLength(2);
  });

  it('may write its logs and read the broker secret, nothing else (with the network interface actions a function in a VPC needs)', () => {
    const statements = statementsOf(synth.template, 'QueuesOperatorRole').map((s) => [s.Action, s.Resource]);
    expect(statements).toEqual([
      [['logs:CreateLogStream', 'logs:PutLogEvents'], { 'Fn::GetAtt': [expect.stringMatching(/^QueuesOperatorLogs/), 'Arn'] }],
      ['secretsmanager:GetSecretValue', SECRET_ARN],
      [expect.arrayContaining(['ec2:CreateNetworkInterface', 'ec2:DeleteNetworkInterface']), '*'],
    ]);
  });

  it('has no Function URL and no resource policy: only an IAM principal granted InvokeFunction can run it', () => {
    synth.template.resourceCountIs('AWS::Lambda::Url', 0);
    const permissions = Object.values(synth.template.findResources('AWS::Lambda::Permission'));
    expect(permissions.filter((p) => JSON.stringify(p.Properties.FunctionName).includes('QueuesOperatorFunction'))).toEqual([]);
  });

  it('grantOperate gives lambda:InvokeFunction on that one function, no wildcard', () => {
    const [policy] = Object.entries(synth.template.findResources('AWS::IAM::Policy'))
      .filter(([id]) => id.startsWith('OperatorsDefaultPolicy'))
      .map(([, p]) => p);
    expect(policy?.Properties.PolicyDocument.Statement).toEqual([
      { Action: 'lambda:InvokeFunction', Effect: 'Allow', Resource: { 'Fn::GetAtt': [expect.stringMatching(/^QueuesOperatorFunction/), 'Arn'] } },
    ]);
  });
});
