import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterEach, describe, expect, it } from 'vitest';
import { IdempotencyTable, type IdempotencyTableProps } from '../../shared/cdk/idempotency-table.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A stack holding the table and one function role granted to it, synthesized with cdk-nag's AwsSolutions rules. */
function synth(props?: IdempotencyTableProps): { template: Template; findings: string[]; table: IdempotencyTable; stack: Stack } {
  const outdir = mkdtempSync(join(tmpdir(), 'boomerang-idempotency-'));
  dirs.push(outdir);
  const app = new App({ outdir });
  const stack = new Stack(app, 'IdempotencyTest');
  const table = new IdempotencyTable(stack, 'Idempotency', props);
  const role = new Role(stack, 'PullRole', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
  table.grant(role);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  const assembly = app.synth();
  const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as {
    pluginReports: { violations: { ruleName: string; violatingResources: { resourceLogicalId: string }[] }[] }[];
  };
  const findings = report.pluginReports.flatMap((p) => p.violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.resourceLogicalId}`)));
  return { template: Template.fromStack(stack), findings, table, stack };
}

describe('IdempotencyTable', () => {
  it('creates an on-demand table keyed on id, with TTL on expiration and point-in-time recovery', () => {
    // Act
    const { template } = synth();
    // Assess
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      TimeToLiveSpecification: { AttributeName: 'expiration', Enabled: true },
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  it.each<[string, IdempotencyTableProps | undefined, string]>([
    ['is deleted with the stack by default', undefined, 'Delete'],
    ['is kept when asked', { removalPolicy: RemovalPolicy.RETAIN }, 'Retain'],
  ])('%s', (_name, props, policy) => {
    // Act
    const { template } = synth(props);
    // Assess
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: policy, UpdateReplacePolicy: policy });
  });

  it("grants the function's role the four item calls on this table only", () => {
    // Act
    const { template } = synth();
    // Assess
    const policies = template.findResources('AWS::IAM::Policy');
    const statements = Object.values(policies).flatMap(
      (p) => (p as { Properties: { PolicyDocument: { Statement: unknown[] } } }).Properties.PolicyDocument.Statement,
    );
    expect(statements).toEqual([
      {
        Effect: 'Allow',
        Action: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        Resource: { 'Fn::GetAtt': [expect.stringMatching(/^IdempotencyTable/), 'Arn'] },
      },
    ]);
    template.hasResourceProperties('AWS::IAM::Policy', { Roles: [{ Ref: Match.stringLikeRegexp('^PullRole') }] });
  });

  it('names the table in the IDEMPOTENCY_STORE value', () => {
    // Prepare
    const { table, stack } = synth();
    // Act
    const setting = stack.resolve(table.storeSetting) as unknown;
    // Assess
    expect(setting).toEqual({ 'Fn::Join': ['', ['dynamodb:', { Ref: expect.stringMatching(/^IdempotencyTable/) }]] });
  });

  it('passes cdk-nag AwsSolutions with nothing acknowledged', () => {
    // Act
    const { findings } = synth();
    // Assess
    expect(findings).toEqual([]);
  });
});
