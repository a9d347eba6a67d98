import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { SYNTH_TIMEOUT_MS, type Synthesized, synthesizeFixture } from '../fixtures/synth.js';
import { statementsOf } from '../fixtures/template.js';

let synth: Synthesized;

// One synth for the whole file: it is the slow part. A 10 s timeout leaves less than HTTP_TIMEOUT_MS (10 s) + SAFETY_MARGIN_MS (3 s).
beforeAll(async () => {
  synth = await synthesizeFixture('orders-event', { stackName: 'Orders' });
}, SYNTH_TIMEOUT_MS);

describe("BoomerangStack for an existing broker, one queue with deploy.modes ['event']", () => {
  it('passes cdk-nag AwsSolutions and the CloudFormation checks', () => {
    // Assess
    expect(synth.findings).toEqual([]);
    expect(synth.acknowledgments.map((a) => a.id.replace(/^Annotation::/, '')).sort()).toEqual([
      'AwsSolutions-IAM5[Resource::*]',
      'AwsSolutions-L1',
      'AwsSolutions-L1',
      'AwsSolutions-L1',
      'CloudFormation-Validate::W2509',
    ]);
  });

  // 13.6: the event function alone, so nothing competes with its mapping.
  it('deploys the event function and its mapping only (and the function of its topology resource): no pull function, no schedule', () => {
    // Assess
    // The event, topology and operator functions.
    synth.template.resourceCountIs('AWS::Lambda::Function', 3);
    synth.template.resourceCountIs('AWS::Events::Rule', 0);
    synth.template.resourceCountIs('AWS::Lambda::EventInvokeConfig', 0);
    synth.template.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
    expect(Object.keys(synth.template.findOutputs('*')).sort()).toEqual([
      'BrokerHostName',
      'OperatorFunctionArn',
      'OperatorFunctionName',
      'OrdersEventFunctionName',
    ]);
    expect(Object.keys(synth.template.findParameters('*'))).toEqual(expect.arrayContaining(['BrokerSecretArn', 'BrokerArn', 'BrokerHost']));
  });

  it('maps the work queue to the event function with basic auth from the secret and the vhost', () => {
    // Assess
    synth.template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: 'Orders-orders-event',
      Timeout: 10,
      ReservedConcurrentExecutions: Match.absent(),
    });
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
    expect(statementsOf(synth.template, 'OrdersEventRole').map((s) => s.Action)).toEqual([
      ['logs:CreateLogStream', 'logs:PutLogEvents'],
      'secretsmanager:GetSecretValue',
      'mq:DescribeBroker',
      [
        'ec2:CreateNetworkInterface',
        'ec2:DeleteNetworkInterface',
        'ec2:DescribeNetworkInterfaces',
        'ec2:DescribeSecurityGroups',
        'ec2:DescribeSubnets',
        'ec2:DescribeVpcs',
      ],
    ]);
  });

  it('alarms when Orders-orders-event parks a message, fails, or times out', () => {
    // Assess
    synth.template.resourceCountIs('AWS::CloudWatch::Alarm', 4);
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Boomerang',
      MetricName: 'parked',
      Dimensions: [{ Name: 'service', Value: 'Orders-orders-event' }],
    });
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: Match.stringLikeRegexp('^OrdersEventFunction') } }],
    });
    synth.template.hasResourceProperties('AWS::Logs::MetricFilter', {
      LogGroupName: { Ref: Match.stringLikeRegexp('^OrdersEventLogs') },
      FilterPattern: '"Task timed out"',
    });
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', { Namespace: 'Boomerang', MetricName: 'timeouts-Orders-orders-event' });
  });

  // 13.2: the synth said nothing.
  it('warns, on the event function, that HTTP_TIMEOUT_MS plus the safety margin exceed its timeout', () => {
    // Assess
    expect(synth.warnings).toEqual([
      {
        path: expect.stringMatching(/^\/Orders\/Default\/OrdersEventFunction/),
        message: expect.stringContaining(
          'orders event function: HTTP_TIMEOUT_MS (10000) + SAFETY_MARGIN_MS (3000) = 13000 ms exceeds its timeout, deploy.event.timeoutSeconds=10 s',
        ),
      },
    ]);
  });
});
