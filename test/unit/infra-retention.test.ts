import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { SYNTH_TIMEOUT_MS, type Synthesized, synthesizeFixture } from '../fixtures/synth.js';
import { statementsOf } from '../fixtures/template.js';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:boomerang-alarms';
let synth: Synthesized;

// One synth for the whole file. One queue, `orders`: pull every 10 min, parkedDepthAlarm 25, retention 14d every 12 h.
beforeAll(async () => {
  synth = await synthesizeFixture('orders-retention', { stackName: 'Orders', alarmTopicArn: TOPIC });
}, SYNTH_TIMEOUT_MS);

describe('BoomerangStack: deploy.retention and deploy.parkedDepthAlarm', () => {
  it('passes cdk-nag AwsSolutions and the CloudFormation checks', () => {
    // Assess
    expect(synth.findings).toEqual([]);
  });

  it('deploys the retention function from its own bundle, with the broker connection settings of the other functions', () => {
    // Assess
    // The pull, retention, topology and operator functions.
    synth.template.resourceCountIs('AWS::Lambda::Function', 4);
    synth.template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: 'Orders-orders-retention',
      Handler: 'index.handler',
      Timeout: 300,
      MemorySize: 256,
      LoggingConfig: { LogGroup: { Ref: Match.stringLikeRegexp('^OrdersRetentionLogs') }, LogFormat: 'Text' },
      Environment: {
        Variables: Match.objectLike({
          AMQP_SECRET_ID: { Ref: 'BrokerSecretArn' },
          AMQP_HOST: { Ref: 'BrokerHost' },
          AMQP_VHOST: '/',
          AMQP_TLS: 'true',
          FUNCTION_NAME: 'Orders-orders-retention',
        }),
      },
    });
    expect(Object.keys(synth.template.findOutputs('*')).sort()).toEqual([
      'BrokerHostName',
      'OperatorFunctionArn',
      'OperatorFunctionName',
      'OrdersPullFunctionName',
      'OrdersRetentionFunctionName',
    ]);
  });

  it('invokes it on its own schedule, every rateHours', () => {
    // Assess
    synth.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(12 hours)',
      Description: 'Invokes Orders-orders-retention every 12 h: deletes what was parked 14d ago or more',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^OrdersRetentionFunction'), 'Arn'] } })],
    });
  });

  it('gives it only its logs and GetSecretValue on the broker secret', () => {
    // Assess
    expect(statementsOf(synth.template, 'OrdersRetentionRole').map((s) => [s.Action, s.Resource])).toEqual([
      [['logs:CreateLogStream', 'logs:PutLogEvents'], { 'Fn::GetAtt': [expect.stringMatching(/^OrdersRetentionLogs/), 'Arn'] }],
      ['secretsmanager:GetSecretValue', { Ref: 'BrokerSecretArn' }],
    ]);
  });

  it('alarms when the retention function fails, notifying the alarm topic', () => {
    // Assess
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: Match.stringLikeRegexp('^OrdersRetentionFunction') } }],
      AlarmActions: [TOPIC],
    });
  });

  it('alarms when the parking lot holds more than parkedDepthAlarm messages: Maximum of parkedDepth over the pull interval, missing data not breaching', () => {
    // Assess: 3 alarms of the pull function, the depth alarm, the retention function's errors
    synth.template.resourceCountIs('AWS::CloudWatch::Alarm', 5);
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Boomerang',
      MetricName: 'parkedDepth',
      Dimensions: [{ Name: 'service', Value: 'Orders-orders-pull' }],
      Statistic: 'Maximum',
      Period: 600,
      Threshold: 25,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
      AlarmActions: [TOPIC],
    });
  });
});
