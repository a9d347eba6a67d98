/**
 * The construct as a team uses it: a plain App and Stack, `new BoomerangQueues(stack, 'Queues', ...)`
 * with literal ARNs, cdk-nag's AwsSolutions rules on the app. And the same template as the example app's
 * BoomerangStack, whose parameters only stand in for those literals.
 */
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../infra/app.js';
import { BoomerangQueues, type BoomerangQueuesProps } from '../../shared/cdk/index.js';
import { REPO_ROOT, tempFunctionsDir, writeQueueFile } from '../fixtures/queue-files.js';
import { SKIP_BUNDLING, SYNTH_TIMEOUT_MS, type Synthesized, synthesizeStack } from '../fixtures/synth.js';
import { statementsOf } from '../fixtures/template.js';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:boomerang/broker-AbCdEf';
const BROKER_HOST = 'b-1234abcd-0000-0000-0000-000000000000.mq.eu-west-1.amazonaws.com';
const BROKER_ARN = 'arn:aws:mq:eu-west-1:123456789012:broker:shop:b-1234abcd-0000-0000-0000-000000000000';
const TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:boomerang-alarms';
const EXAMPLES = ['functions/partner-sync.ts', 'functions/webhooks.ts'].map((file) => join(REPO_ROOT, file));

let fixtures: ReturnType<typeof tempFunctionsDir>;

/** A team's app: a plain stack named `stackName` with the construct as `id`, cdk-nag on the app, no bundling. */
function teamStack(stackName: string, id: string, props: (stack: Stack) => Partial<BoomerangQueuesProps>): { app: App; stack: Stack; queues: BoomerangQueues } {
  const app = new App({ context: SKIP_BUNDLING });
  const stack = new Stack(app, stackName);
  const queues = new BoomerangQueues(stack, id, { brokerSecret: SECRET_ARN, brokerHost: BROKER_HOST, brokerArn: BROKER_ARN, ...props(stack) });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stack, queues };
}

/** The example app's template with its parameters replaced by the literals a team's stack gives instead. */
function appTemplate(functionsDir: string, context: Record<string, unknown>): Record<string, unknown> {
  const { app, stack } = createApp({ context: { ...SKIP_BUNDLING, ...context }, functionsDir });
  const template = JSON.stringify(synthesizeStack(app, stack).template.toJSON());
  const literals: Record<string, string> = { BrokerSecretArn: SECRET_ARN, BrokerHost: BROKER_HOST, BrokerArn: BROKER_ARN };
  return foldJoins(
    JSON.parse(template.replace(/\{"Ref":"(BrokerSecretArn|BrokerHost|BrokerArn)"\}/g, (_ref, name: string) => JSON.stringify(literals[name]))),
  ) as Record<string, unknown>;
}

/** `Fn::Join` of strings only, as the string it makes: CDK writes a literal where a parameter made a join. */
function foldJoins(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(foldJoins);
  if (typeof value !== 'object' || value === null) return value;
  const join = (value as Record<string, unknown>)['Fn::Join'] as [string, unknown[]] | undefined;
  if (join?.[1].every((part) => typeof part === 'string')) return join[1].join(join[0]);
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, foldJoins(inner)]));
}

beforeAll(() => {
  // Idempotency on the construct's table, Redis behind a secret with retention, event only.
  fixtures = tempFunctionsDir();
  writeQueueFile(fixtures.dir, { template: 'orders-idempotent', name: 'orders', workQueue: 'orders' });
  writeQueueFile(fixtures.dir, { template: 'orders-redis-secret', name: 'cache', workQueue: 'cache' });
  writeQueueFile(fixtures.dir, { template: 'orders-event', name: 'evt', workQueue: 'evt' });
});

afterAll(() => fixtures.remove());

describe("Class: BoomerangQueues in a team's stack", () => {
  let synth: Synthesized;
  let queues: BoomerangQueues;

  beforeAll(() => {
    const files = [...EXAMPLES, join(fixtures.dir, 'orders.ts'), join(fixtures.dir, 'cache.ts'), join(fixtures.dir, 'evt.ts')];
    const team = teamStack('Shop', 'Queues', () => ({ files, logRetention: RetentionDays.TWO_WEEKS }));
    queues = team.queues;
    synth = synthesizeStack(team.app, team.stack);
  }, SYNTH_TIMEOUT_MS);

  it('passes cdk-nag AwsSolutions and the CloudFormation checks, acknowledging only what its resources must keep, each with a reason', () => {
    // Assess
    expect(synth.findings).toEqual([]);
    expect(new Set(synth.acknowledgments.map((a) => a.id.replace(/^Annotation::/, '')))).toEqual(
      new Set(['AwsSolutions-L1', 'AwsSolutions-IAM5[Resource::*]']),
    );
    for (const { reason } of synth.acknowledgments) expect(reason.length).toBeGreaterThan(40);
  });

  it('deploys every queue of the files given: the functions of its modes, their schedules and mappings, retention, named <stack>-<queue>-<mode>', () => {
    // Assess
    expect([...queues.functions.keys()]).toEqual([
      'partner-sync-pull',
      'partner-sync-event',
      'partner-sync-retention',
      'webhooks-pull',
      'webhooks-event',
      'orders-pull',
      'orders-event',
      'cache-pull',
      'cache-event',
      'cache-retention',
      'evt-event',
    ]);
    // And one topology function per queue (5), and the operator function.
    synth.template.resourceCountIs('AWS::Lambda::Function', 17);
    synth.template.resourceCountIs('AWS::Lambda::EventSourceMapping', 5);
    // Four pull schedules, two retention schedules.
    synth.template.resourceCountIs('AWS::Events::Rule', 6);
    synth.template.hasResourceProperties('AWS::Lambda::Function', { FunctionName: 'Shop-cache-retention' });
    synth.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: BROKER_ARN,
      Queues: ['evt'],
      SourceAccessConfigurations: [
        { Type: 'BASIC_AUTH', URI: SECRET_ARN },
        { Type: 'VIRTUAL_HOST', URI: '/' },
      ],
    });
    synth.template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 14 });
    expect(queues.broker).toEqual({ arn: BROKER_ARN, host: BROKER_HOST });
    expect(queues.bundles).toEqual([]);
  });

  it("alarms on each function (parked, failing, timed out), each parking lot's depth and each retention function", () => {
    // Assess: 3 × 9 pull and event functions, 5 depth alarms, 2 retention alarms
    synth.template.resourceCountIs('AWS::CloudWatch::Alarm', 34);
    synth.template.resourceCountIs('AWS::Logs::MetricFilter', 9);
  });

  it('gives the queue that asks for it its own idempotency table, and its functions the four item calls on it', () => {
    // Assess
    synth.template.resourceCountIs('AWS::DynamoDB::Table', 1);
    const [table] = Object.keys(synth.template.findResources('AWS::DynamoDB::Table'));
    expect(
      statementsOf(synth.template, 'QueuesOrdersPullRole')
        .filter((s) => JSON.stringify(s.Resource).includes(table as string))
        .map((s) => s.Action),
    ).toEqual([['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']]);
  });

  it('reads the broker secret, and the Redis secret only where a queue names it', () => {
    // Assess
    expect(statementsOf(synth.template, 'QueuesWebhooksPullRole').map((s) => [s.Action, s.Resource])).toEqual([
      [['logs:CreateLogStream', 'logs:PutLogEvents'], { 'Fn::GetAtt': [expect.stringMatching(/^QueuesWebhooksPullLogs/), 'Arn'] }],
      ['secretsmanager:GetSecretValue', SECRET_ARN],
    ]);
    expect(JSON.stringify(statementsOf(synth.template, 'QueuesCachePullRole'))).toContain('boomerang/redis-AbCdEf');
    synth.template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: 'Shop-webhooks-pull',
      Environment: { Variables: Match.objectLike({ AMQP_SECRET_ID: SECRET_ARN, AMQP_HOST: BROKER_HOST, FUNCTION_NAME: 'Shop-webhooks-pull' }) },
    });
  });

  it('warns on the function whose timeout cuts HTTP_TIMEOUT_MS short', () => {
    // Assess
    expect(synth.warnings).toEqual([
      {
        path: expect.stringMatching(/^\/Shop\/Queues\/EvtEventFunction/),
        message: expect.stringContaining('evt event function: HTTP_TIMEOUT_MS (10000) + SAFETY_MARGIN_MS (3000) = 13000 ms exceeds its timeout'),
      },
    ]);
  });
});

describe('Class: BoomerangQueues with tracing: xray', () => {
  it(
    "gives the queue's pull and event functions Lambda's active tracing and its two X-Ray actions, not its retention function; cdk-nag stays clean",
    () => {
      // Prepare: TRACING=xray for the examples, through functionEnvironment (a queue's file may set tracing too)
      const team = teamStack('Traced', 'Queues', () => ({ files: EXAMPLES, functionEnvironment: { TRACING: 'xray' } }));
      // Act
      const traced = synthesizeStack(team.app, team.stack);
      // Assess
      expect(traced.findings).toEqual([]);
      const functions = Object.values(traced.template.findResources('AWS::Lambda::Function')).map((f) => [
        f.Properties.FunctionName,
        f.Properties.TracingConfig?.Mode,
      ]);
      expect(functions).toEqual([
        ['Traced-partner-sync-topology', undefined],
        ['Traced-partner-sync-pull', 'Active'],
        ['Traced-partner-sync-event', 'Active'],
        ['Traced-partner-sync-retention', undefined],
        ['Traced-webhooks-topology', undefined],
        ['Traced-webhooks-pull', 'Active'],
        ['Traced-webhooks-event', 'Active'],
        ['Traced-operator', undefined],
      ]);
      const xray = Object.entries(traced.template.findResources('AWS::IAM::Policy')).map(([id, p]) => [
        id.replace(/[0-9A-F]{8}$/, ''),
        p.Properties.PolicyDocument.Statement.map((st: { Action: unknown }) => st.Action),
      ]);
      expect(xray).toEqual(
        ['PartnerSyncPull', 'PartnerSyncEvent', 'WebhooksPull', 'WebhooksEvent'].map((id) => [
          `Queues${id}RoleDefaultPolicy`,
          [['xray:PutTraceSegments', 'xray:PutTelemetryRecords']],
        ]),
      );
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe("Class: BoomerangQueues as the example app's stack", () => {
  const network = { subnetIds: ['subnet-0123456789abcdef0', 'subnet-0fedcba9876543210'], securityGroupIds: ['sg-0123456789abcdef0'] };
  it.each<[string, () => string, Record<string, unknown>, (stack: Stack) => Partial<BoomerangQueuesProps>]>([
    ['the two example queues', () => join(REPO_ROOT, 'functions'), {}, () => ({})],
    [
      'the fixtures: an idempotency table, a Redis secret with retention, an event-only queue; an alarm topic',
      () => fixtures.dir,
      { alarmTopicArn: TOPIC_ARN, logRetentionDays: '14' },
      (stack) => ({ alarmTopic: Topic.fromTopicArn(stack, 'Topic', TOPIC_ARN), logRetention: RetentionDays.TWO_WEEKS }),
    ],
    [
      'the two example queues, a RabbitMQ 4.3 broker it creates, in a VPC, functionEnvironment',
      () => join(REPO_ROOT, 'functions'),
      {
        createBroker: 'true',
        brokerEngineVersion: '4.3',
        brokerInstanceType: 'mq.m7g.medium',
        subnetIds: network.subnetIds.join(','),
        securityGroupIds: network.securityGroupIds[0],
        functionEnvironment: '{"LOG_LEVEL":"debug"}',
      },
      () => ({
        brokerHost: undefined,
        brokerArn: undefined,
        createBroker: { engineVersion: '4.3', instanceType: 'mq.m7g.medium' },
        network,
        functionEnvironment: { LOG_LEVEL: 'debug' },
      }),
    ],
  ])(
    'makes, with %s, the template of BoomerangStack, whose parameters stand for the literals',
    (_what, dir, context, props) => {
      // Prepare
      const team = teamStack('Orders', 'Default', (stack) => ({ functionsDir: dir(), ...props(stack) }));
      // Act
      const expected = appTemplate(dir(), { stackName: 'Orders', ...context }) as { Resources: unknown; Outputs: unknown };
      const actual = synthesizeStack(team.app, team.stack).template.toJSON();
      // Assess: the same resources and outputs, logical ids included; the app's description and parameters are its own
      expect(actual.Resources).toEqual(expected.Resources);
      expect(actual.Outputs).toEqual(expected.Outputs);
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    "notifies an alarm topic from every alarm, and notes a functionEnvironment variable the queue's file replaces",
    () => {
      // Prepare
      const app = new App({ context: SKIP_BUNDLING });
      const stack = new Stack(app, 'Orders');
      // Act
      new BoomerangQueues(stack, 'Queues', {
        files: [EXAMPLES[1] as string],
        brokerSecret: Secret.fromSecretCompleteArn(stack, 'Secret', SECRET_ARN),
        brokerHost: BROKER_HOST,
        brokerArn: BROKER_ARN,
        alarmTopic: Topic.fromTopicArn(stack, 'Topic', TOPIC_ARN),
        functionEnvironment: { CONCURRENCY: '4' },
      });
      const template = synthesizeStack(app, stack).template;
      // Assess
      template.resourceCountIs('AWS::CloudWatch::Alarm', 7);
      template.allResourcesProperties('AWS::CloudWatch::Alarm', { AlarmActions: [TOPIC_ARN] });
      Annotations.fromStack(stack).hasInfo(
        '/Orders/Queues',
        'functionEnvironment: CONCURRENCY=4 is set but not used: concurrency in defineQueue("webhooks") is 8',
      );
    },
    SYNTH_TIMEOUT_MS,
  );
});
