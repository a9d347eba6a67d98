import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { SYNTH_TIMEOUT_MS, type Synthesized, synthesizeFixture } from '../fixtures/synth.js';
import { statementsOf } from '../fixtures/template.js';

let synth: Synthesized;

// One synth for the whole file: it is the slow part. One queue, `orders`, with no deploy.modes: the default, pull only.
beforeAll(async () => {
  synth = await synthesizeFixture('orders-pull', {
    stackName: 'Orders',
    logRetentionDays: '14',
    functionEnvironment: '{"CONCURRENCY":"4"}',
  });
}, SYNTH_TIMEOUT_MS);

describe('BoomerangStack for an existing broker, one queue with the default modes', () => {
  it('passes cdk-nag AwsSolutions and the CloudFormation checks, each acknowledgment with a reason', () => {
    // Assess
    expect(synth.findings).toEqual([]);
    // CDK files an id without a known plugin prefix under `Annotation::`; cdk-nag 3 matches it without.
    expect(synth.acknowledgments.map((a) => a.id.replace(/^Annotation::/, '')).sort()).toEqual([
      'AwsSolutions-L1',
      'AwsSolutions-L1',
      'AwsSolutions-L1',
      'CloudFormation-Validate::W2509',
    ]);
    for (const { reason } of synth.acknowledgments) expect(reason.length).toBeGreaterThan(40);
  });

  it('deploys the pull function only (and the function of its topology resource): no event function, no event source mapping competing for the queue', () => {
    // Assess
    // The pull, topology and operator functions.
    synth.template.resourceCountIs('AWS::Lambda::Function', 3);
    synth.template.resourceCountIs('AWS::Lambda::EventSourceMapping', 0);
    synth.template.resourceCountIs('AWS::Events::Rule', 1);
    expect(Object.keys(synth.template.findOutputs('*')).sort()).toEqual([
      'BrokerHostName',
      'OperatorFunctionArn',
      'OperatorFunctionName',
      'OrdersPullFunctionName',
    ]);
  });

  it('takes the secret and the broker host as parameters (no broker ARN: nothing needs it), and puts no secret in the template', () => {
    // Assess
    expect(
      Object.keys(synth.template.findParameters('*'))
        .filter((name) => !name.startsWith('BootstrapVersion'))
        .sort(),
    ).toEqual(['BrokerHost', 'BrokerSecretArn']);
    synth.template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    synth.template.resourceCountIs('AWS::AmazonMQ::Broker', 0);
  });

  it('deploys the pull function on a schedule, without asynchronous retries, with reserved concurrency', () => {
    // Assess
    synth.template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: 'Orders-orders-pull',
      Runtime: 'nodejs22.x',
      Handler: 'index.handler',
      Timeout: 60,
      MemorySize: 256,
      ReservedConcurrentExecutions: 1,
      LoggingConfig: Match.objectLike({ LogFormat: 'Text' }),
      Environment: {
        Variables: Match.objectLike({
          AMQP_SECRET_ID: { Ref: 'BrokerSecretArn' },
          AMQP_HOST: { Ref: 'BrokerHost' },
          AMQP_VHOST: '/',
          AMQP_TLS: 'true',
          FUNCTION_NAME: 'Orders-orders-pull',
          CONCURRENCY: '4',
        }),
      },
    });
    // The queues are the definition's: the environment does not repeat them.
    const [fn] = Object.values(synth.template.findResources('AWS::Lambda::Function'));
    expect(Object.keys(fn?.Properties.Environment.Variables as object)).not.toEqual(expect.arrayContaining(['WORK_QUEUE']));
    synth.template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' });
    synth.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 300 });
  });

  it('gives the pull function only what it needs: its logs and GetSecretValue on the one secret', () => {
    // Assess
    expect(statementsOf(synth.template, 'OrdersPullRole').map((s) => [s.Action, s.Resource])).toEqual([
      [['logs:CreateLogStream', 'logs:PutLogEvents'], { 'Fn::GetAtt': [expect.stringMatching(/^OrdersPullLogs/), 'Arn'] }],
      ['secretsmanager:GetSecretValue', { Ref: 'BrokerSecretArn' }],
    ]);
    synth.template.allResourcesProperties('AWS::IAM::Role', { ManagedPolicyArns: Match.absent() });
  });

  it('keeps logs for the configured retention', () => {
    // Assess
    synth.template.resourceCountIs('AWS::Logs::LogGroup', 3);
    synth.template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 14 });
  });

  it('alarms when Orders-orders-pull parks a message (metric Boomerang/parked, dimension service)', () => {
    // Assess
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Boomerang',
      MetricName: 'parked',
      Dimensions: [{ Name: 'service', Value: 'Orders-orders-pull' }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it('alarms while the parking lot holds any message (the default parkedDepthAlarm 0): Maximum of parkedDepth over 5 minutes', () => {
    // Assess
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Boomerang',
      MetricName: 'parkedDepth',
      Dimensions: [{ Name: 'service', Value: 'Orders-orders-pull' }],
      Statistic: 'Maximum',
      Period: 300,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  // 13.4: the pull function had neither.
  it('alarms when the pull function fails (Lambda Errors) and when it times out (the runtime\'s "Task timed out" line)', () => {
    // Assess
    synth.template.resourceCountIs('AWS::CloudWatch::Alarm', 4);
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: Match.stringLikeRegexp('^OrdersPullFunction') } }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    synth.template.hasResourceProperties('AWS::Logs::MetricFilter', {
      LogGroupName: { Ref: Match.stringLikeRegexp('^OrdersPullLogs') },
      FilterPattern: '"Task timed out"',
      MetricTransformations: [{ MetricNamespace: 'Boomerang', MetricName: 'timeouts-Orders-orders-pull', MetricValue: '1' }],
    });
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Boomerang',
      MetricName: 'timeouts-Orders-orders-pull',
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('warns about nothing: HTTP_TIMEOUT_MS and the safety margin fit in the timeout', () => {
    // Assess
    expect(synth.warnings).toEqual([]);
  });
});
