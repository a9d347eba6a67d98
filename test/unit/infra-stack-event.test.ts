import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { SYNTH_TIMEOUT_MS, type Synthesized, synthesize } from '../fixtures/synth.js';
import { statementsOf } from '../fixtures/template.js';

let synth: Synthesized;

// One synth for the whole file: it is the slow part. A 10 s timeout leaves less than HTTP_TIMEOUT_MS (10 s) + SAFETY_MARGIN_MS (3 s).
beforeAll(() => {
  synth = synthesize({ stackName: 'Orders', workQueue: 'orders', modes: 'event', eventBatchSize: '50', eventBatchWindowSeconds: '2', eventTimeoutSeconds: '10' });
}, SYNTH_TIMEOUT_MS);

describe('BoomerangStack for an existing broker, modes=event', () => {
  it('passes cdk-nag AwsSolutions and the CloudFormation checks', () => {
    // Assess
    expect(synth.findings).toEqual([]);
    expect(synth.acknowledgments.map((a) => a.id.replace(/^Annotation::/, '')).sort()).toEqual(['AwsSolutions-IAM5[Resource::*]', 'AwsSolutions-L1', 'CloudFormation-Validate::W2509']);
  });

  // 13.6: the event function alone, so nothing competes with its mapping.
  it('deploys the event function and its mapping only: no pull function, no schedule', () => {
    // Assess
    synth.template.resourceCountIs('AWS::Lambda::Function', 1);
    synth.template.resourceCountIs('AWS::Events::Rule', 0);
    synth.template.resourceCountIs('AWS::Lambda::EventInvokeConfig', 0);
    synth.template.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
    expect(Object.keys(synth.template.findOutputs('*')).sort()).toEqual(['BrokerHostName', 'EventFunctionName']);
    expect(Object.keys(synth.template.findParameters('*'))).toEqual(expect.arrayContaining(['BrokerSecretArn', 'BrokerArn', 'BrokerHost']));
  });

  it('maps the work queue to the event function with basic auth from the secret and the vhost', () => {
    // Assess
    synth.template.hasResourceProperties('AWS::Lambda::Function', { FunctionName: 'Orders-event', Timeout: 10, ReservedConcurrentExecutions: Match.absent() });
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

  it("gives the event function its logs, GetSecretValue on the one secret, and the mapping's MQ and network actions", () => {
    // Assess
    expect(statementsOf(synth.template, 'EventRole').map((s) => s.Action)).toEqual([
      ['logs:CreateLogStream', 'logs:PutLogEvents'],
      'secretsmanager:GetSecretValue',
      'mq:DescribeBroker',
      ['ec2:CreateNetworkInterface', 'ec2:DeleteNetworkInterface', 'ec2:DescribeNetworkInterfaces', 'ec2:DescribeSecurityGroups', 'ec2:DescribeSubnets', 'ec2:DescribeVpcs'],
    ]);
  });

  it('alarms when Orders-event parks a message, fails, or times out', () => {
    // Assess
    synth.template.resourceCountIs('AWS::CloudWatch::Alarm', 3);
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', { Namespace: 'Boomerang', MetricName: 'parked', Dimensions: [{ Name: 'service', Value: 'Orders-event' }] });
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', { Namespace: 'AWS/Lambda', MetricName: 'Errors', Dimensions: [{ Name: 'FunctionName', Value: { Ref: Match.stringLikeRegexp('^EventFunction') } }] });
    synth.template.hasResourceProperties('AWS::Logs::MetricFilter', { LogGroupName: { Ref: Match.stringLikeRegexp('^EventLogs') }, FilterPattern: '"Task timed out"' });
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', { Namespace: 'Boomerang', MetricName: 'timeouts-Orders-event' });
  });

  // 13.2: the synth said nothing.
  it('warns, on the event function, that HTTP_TIMEOUT_MS plus the safety margin exceed its timeout', () => {
    // Assess
    expect(synth.warnings).toEqual([
      {
        path: expect.stringMatching(/^\/Orders\/EventFunction/),
        message: expect.stringContaining('event function: HTTP_TIMEOUT_MS (10000) + SAFETY_MARGIN_MS (3000) = 13000 ms exceeds its timeout, eventTimeoutSeconds=10 s'),
      },
    ]);
  });
});
