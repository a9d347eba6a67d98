import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { SYNTH_TIMEOUT_MS, type Synthesized, synthesize } from '../fixtures/synth.js';
import { statementsOf } from '../fixtures/template.js';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:boomerang-alarms';
const SUBNET_A = 'subnet-0123456789abcdef0';
const SUBNET_B = 'subnet-0fedcba9876543210';
const GROUP = 'sg-0123456789abcdef0';
let synth: Synthesized;

// One synth for the whole file: it is the slow part.
// The queues declared in functions/ (webhooks and partner-sync, each deploying both modes, acknowledged): what `npm run synth` deploys.
beforeAll(async () => {
  synth = await synthesize({
    createBroker: 'true',
    brokerEngineVersion: '4.3',
    brokerInstanceType: 'mq.m7g.medium',
    subnetIds: `${SUBNET_A},${SUBNET_B}`,
    securityGroupIds: GROUP,
    alarmTopicArn: TOPIC,
  });
}, SYNTH_TIMEOUT_MS);

describe('BoomerangStack with its own RabbitMQ 4.3 broker, in a VPC, for the two example queues (both modes acknowledged)', () => {
  it('passes cdk-nag AwsSolutions and the CloudFormation checks', () => {
    // Assess
    expect(synth.findings).toEqual([]);
    expect(synth.acknowledgments.filter((a) => a.id.endsWith('IAM5[Resource::*]')).map((a) => a.path)).toEqual([
      'Boomerang/Default/PartnerSyncTopologyRole',
      'Boomerang/Default/PartnerSyncPullRole',
      'Boomerang/Default/PartnerSyncEventRole',
      'Boomerang/Default/PartnerSyncEventRole',
      'Boomerang/Default/PartnerSyncRetentionRole',
      'Boomerang/Default/WebhooksTopologyRole',
      'Boomerang/Default/WebhooksPullRole',
      'Boomerang/Default/WebhooksEventRole',
      'Boomerang/Default/WebhooksEventRole',
      'Boomerang/Default/OperatorRole',
    ]);
  });

  it('creates a private single-instance RabbitMQ 4.3 broker on mq.m7g whose user comes from the secret by dynamic reference', () => {
    // Assess
    synth.template.hasResourceProperties('AWS::AmazonMQ::Broker', {
      EngineType: 'RABBITMQ',
      EngineVersion: '4.3',
      HostInstanceType: 'mq.m7g.medium',
      DeploymentMode: 'SINGLE_INSTANCE',
      PubliclyAccessible: false,
      SubnetIds: [SUBNET_A],
      SecurityGroups: [GROUP],
      Users: [
        {
          Username: { 'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: 'BrokerSecretArn' }, ':SecretString:username::}}']] },
          Password: { 'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: 'BrokerSecretArn' }, ':SecretString:password::}}']] },
        },
      ],
    });
    expect(Object.keys(synth.template.findParameters('*'))).not.toContain('BrokerArn');
    synth.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^Broker'), 'Arn'] } });
  });

  it('puts both functions into the subnets and security groups, with the network actions on their roles', () => {
    // Assess
    synth.template.allResourcesProperties('AWS::Lambda::Function', { VpcConfig: { SubnetIds: [SUBNET_A, SUBNET_B], SecurityGroupIds: [GROUP] } });
    synth.template.hasResourceProperties('AWS::IAM::Role', {
      Policies: [
        {
          PolicyDocument: {
            Statement: Match.arrayWith([
              Match.objectLike({ Action: Match.arrayWith(['ec2:CreateNetworkInterface', 'ec2:AssignPrivateIpAddresses']), Resource: '*' }),
            ]),
          },
        },
      ],
    });
  });

  it('deploys each queue with both functions, its schedule, its mapping, its log groups and three alarms per function; partner-sync its retention function; each queue its topology function', () => {
    // Assess
    // 5, a topology function per queue (2) and the operator function
    synth.template.resourceCountIs('AWS::Lambda::Function', 8);
    synth.template.resourceCountIs('AWS::Lambda::EventSourceMapping', 2);
    synth.template.resourceCountIs('AWS::Events::Rule', 3);
    synth.template.resourceCountIs('AWS::Logs::LogGroup', 8);
    synth.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 day)',
      Description: 'Invokes Boomerang-partner-sync-retention every 24 h: deletes what was parked 14d ago or more',
    });
    synth.template.resourceCountIs('AWS::Logs::MetricFilter', 4);
    for (const [queue, workQueue, rate, batch] of [
      ['partner-sync', 'boomerang.partner-sync', 'rate(2 minutes)', 50],
      ['webhooks', 'boomerang.webhooks', 'rate(1 minute)', 100],
    ] as const) {
      synth.template.hasResourceProperties('AWS::Lambda::Function', { FunctionName: `Boomerang-${queue}-pull` });
      synth.template.hasResourceProperties('AWS::Lambda::Function', { FunctionName: `Boomerang-${queue}-event` });
      synth.template.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression: rate,
        Description: `Invokes Boomerang-${queue}-pull every ${rate.match(/\d+/)?.[0]} min`,
      });
      synth.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { Queues: [workQueue], BatchSize: batch });
    }
  });

  it("alarms on each parking lot's depth as the larger reading of its two functions, over the pull interval", () => {
    // Assess
    const depth = (service: string, id: string) =>
      Match.objectLike({
        Id: id,
        ReturnData: false,
        MetricStat: Match.objectLike({
          Stat: 'Maximum',
          Period: 300,
          Metric: { Namespace: 'Boomerang', MetricName: 'parkedDepth', Dimensions: [{ Name: 'service', Value: service }] },
        }),
      });
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: 'MAX([depth0, depth1])' }),
        depth('Boomerang-partner-sync-pull', 'depth0'),
        depth('Boomerang-partner-sync-event', 'depth1'),
      ]),
    });
  });

  it('notifies the alarm topic from every alarm', () => {
    // Assess: three per pull or event function, one on each parking lot's depth, one on the retention function's errors
    synth.template.resourceCountIs('AWS::CloudWatch::Alarm', 15);
    synth.template.allResourcesProperties('AWS::CloudWatch::Alarm', { AlarmActions: [TOPIC] });
  });

  it("declares each queue's topology with a custom resource served by the queue's own topology function, which the schedule and the event source mapping depend on", () => {
    // Assess
    const resources = synth.template.findResources('Custom::BoomerangTopology');
    expect(Object.keys(resources).sort()).toEqual([expect.stringMatching(/^PartnerSyncTopologyResource/), expect.stringMatching(/^WebhooksTopologyResource/)]);
    synth.template.hasResourceProperties('Custom::BoomerangTopology', {
      ServiceToken: { 'Fn::GetAtt': [Match.stringLikeRegexp('^WebhooksTopologyFunction'), 'Arn'] },
      Queue: 'webhooks',
      WorkQueue: 'boomerang.webhooks',
      VirtualHost: '/',
      Entities: Match.arrayWith(['queue boomerang.webhooks', Match.stringLikeRegexp('^exchange boomerang.webhooks.delay-path.')]),
      PlanDigest: Match.stringLikeRegexp('^[0-9a-f]{16}$'),
    });
    synth.template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: 'Boomerang-webhooks-topology',
      Timeout: 120,
      VpcConfig: { SubnetIds: [SUBNET_A, SUBNET_B], SecurityGroupIds: [GROUP] },
    });
    const [webhooks] = Object.keys(resources).filter((id) => id.startsWith('Webhooks'));
    const dependents = (type: string) =>
      Object.values(synth.template.findResources(type)).filter((r) => (r.DependsOn as string[] | undefined)?.includes(webhooks as string));
    expect(dependents('AWS::Events::Rule').map((r) => r.Properties.Description)).toEqual(['Invokes Boomerang-webhooks-pull every 1 min']);
    expect(dependents('AWS::Lambda::EventSourceMapping').map((r) => r.Properties.Queues)).toEqual([['boomerang.webhooks']]);
  });

  it('gives the topology function its logs, GetSecretValue on the broker secret and the network actions, nothing else', () => {
    // Assess
    expect(statementsOf(synth.template, 'WebhooksTopologyRole').map((s) => s.Action)).toEqual([
      ['logs:CreateLogStream', 'logs:PutLogEvents'],
      'secretsmanager:GetSecretValue',
      [
        'ec2:CreateNetworkInterface',
        'ec2:DescribeNetworkInterfaces',
        'ec2:DeleteNetworkInterface',
        'ec2:AssignPrivateIpAddresses',
        'ec2:UnassignPrivateIpAddresses',
      ],
    ]);
  });
});
