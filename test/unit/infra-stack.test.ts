import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Synthesized, synthesize } from '../fixtures/synth.js';

let synth: Synthesized;

/** The inline policy statements of the role whose logical id starts with `prefix`. */
function statementsOf(prefix: string): { Action: string | string[]; Resource: unknown }[] {
  const roles = synth.template.findResources('AWS::IAM::Role');
  const [, role] = Object.entries(roles).find(([id]) => id.startsWith(prefix)) ?? [];
  return (role?.Properties.Policies as { PolicyDocument: { Statement: { Action: string | string[]; Resource: unknown }[] } }[]).flatMap((p) => p.PolicyDocument.Statement);
}

// One synth for the whole file: it is the slow part.
beforeAll(() => {
  synth = synthesize({
    stackName: 'Orders',
    workQueue: 'orders',
    pullRateMinutes: '5',
    eventBatchSize: '50',
    eventBatchWindowSeconds: '2',
    logRetentionDays: '14',
    functionEnvironment: '{"MAX_RETRIES":"8"}',
  });
});

describe('BoomerangStack for an existing broker', () => {
  it('passes cdk-nag AwsSolutions and the CloudFormation checks, each acknowledgment with a reason', () => {
    // Assess
    expect(synth.findings).toEqual([]);
    // CDK files an id without a known plugin prefix under `Annotation::`; cdk-nag 3 matches it without.
    expect(synth.acknowledgments.map((a) => a.id.replace(/^Annotation::/, '')).sort()).toEqual(['AwsSolutions-IAM5[Resource::*]', 'AwsSolutions-L1', 'AwsSolutions-L1', 'CloudFormation-Validate::W2509']);
    for (const { reason } of synth.acknowledgments) expect(reason.length).toBeGreaterThan(40);
  });

  it('takes the secret, the broker ARN and its host as parameters, and puts no secret in the template', () => {
    // Assess
    expect(Object.keys(synth.template.findParameters('*'))).toEqual(expect.arrayContaining(['BrokerSecretArn', 'BrokerArn', 'BrokerHost']));
    synth.template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    synth.template.resourceCountIs('AWS::AmazonMQ::Broker', 0);
  });

  it('deploys the pull function on a schedule, without asynchronous retries, with reserved concurrency', () => {
    // Assess
    synth.template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: 'Orders-pull',
      Runtime: 'nodejs22.x',
      Handler: 'index.handler',
      Timeout: 60,
      MemorySize: 256,
      ReservedConcurrentExecutions: 1,
      Environment: { Variables: Match.objectLike({ WORK_QUEUE: 'orders', AMQP_SECRET_ID: { Ref: 'BrokerSecretArn' }, AMQP_HOST: { Ref: 'BrokerHost' }, AMQP_TLS: 'true', FUNCTION_NAME: 'Orders-pull', MAX_RETRIES: '8' }) },
    });
    synth.template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' });
    synth.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 300 });
  });

  it('maps the work queue to the event function with basic auth from the secret and the vhost', () => {
    // Assess
    synth.template.hasResourceProperties('AWS::Lambda::Function', { FunctionName: 'Orders-event', ReservedConcurrentExecutions: Match.absent() });
    synth.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { Ref: 'BrokerArn' },
      Queues: ['orders'],
      BatchSize: 50,
      MaximumBatchingWindowInSeconds: 2,
      SourceAccessConfigurations: [
        { Type: 'BASIC_AUTH', URI: { Ref: 'BrokerSecretArn' } },
        { Type: 'VIRTUAL_HOST', URI: '/' },
      ],
    });
  });

  it('gives each function only what it needs: its logs, GetSecretValue on the one secret, and (event) the mapping\'s MQ and network actions', () => {
    // Assess
    expect(statementsOf('PullRole').map((s) => [s.Action, s.Resource])).toEqual([
      [['logs:CreateLogStream', 'logs:PutLogEvents'], { 'Fn::GetAtt': [expect.stringMatching(/^PullLogs/), 'Arn'] }],
      ['secretsmanager:GetSecretValue', { Ref: 'BrokerSecretArn' }],
    ]);
    expect(statementsOf('EventRole').map((s) => s.Action)).toEqual([
      ['logs:CreateLogStream', 'logs:PutLogEvents'],
      'secretsmanager:GetSecretValue',
      'mq:DescribeBroker',
      ['ec2:CreateNetworkInterface', 'ec2:DeleteNetworkInterface', 'ec2:DescribeNetworkInterfaces', 'ec2:DescribeSecurityGroups', 'ec2:DescribeSubnets', 'ec2:DescribeVpcs'],
    ]);
    synth.template.allResourcesProperties('AWS::IAM::Role', { ManagedPolicyArns: Match.absent() });
  });

  it('keeps logs for the configured retention', () => {
    // Assess
    synth.template.resourceCountIs('AWS::Logs::LogGroup', 2);
    synth.template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 14 });
  });

  it.each(['Orders-pull', 'Orders-event'])('alarms when %s parks a message (metric Boomerang/parked, dimension service)', (functionName) => {
    // Assess
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Boomerang',
      MetricName: 'parked',
      Dimensions: [{ Name: 'service', Value: functionName }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });
});
