import { describe, expect, it } from 'vitest';
import { type CustomResourceEvent, MAX_RESPONSE_BYTES, responseBody } from '../../shared/topology/cfn-response.js';

/** A Create request as CloudFormation sends it (User Guide, "Custom resource request objects"). */
const CREATE: CustomResourceEvent<{ Queue: string }> = {
  RequestType: 'Create',
  ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:Shop-orders-topology',
  ResponseURL: 'https://cloudformation-custom-resource-response-euwest1.s3-eu-west-1.amazonaws.com/arn%3Aaws%3Acloudformation?X-Amz-Signature=abc',
  StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/Shop/5b918d10-cd98-11ea-90d5-0a9cd3354c10',
  RequestId: '0a5e4b6c-0d5f-4c5d-9b8e-0123456789ab',
  ResourceType: 'Custom::BoomerangTopology',
  LogicalResourceId: 'OrdersTopologyResource1A2B3C4D',
  ResourceProperties: { ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:Shop-orders-topology', Queue: 'orders' },
};

describe('responseBody', () => {
  it('answers with the fields CloudFormation reads, from the request and the outcome', () => {
    // Act
    const body = JSON.parse(responseBody(CREATE, { status: 'SUCCESS', reason: 'applied', physicalResourceId: 'orders@/', data: { WorkQueue: 'orders' } }));
    // Assess
    expect(body).toEqual({
      Status: 'SUCCESS',
      Reason: 'applied',
      PhysicalResourceId: 'orders@/',
      StackId: CREATE.StackId,
      RequestId: CREATE.RequestId,
      LogicalResourceId: CREATE.LogicalResourceId,
      NoEcho: false,
      Data: { WorkQueue: 'orders' },
    });
  });

  it.each([
    ['plain text', 'x'.repeat(10_000)],
    ['characters of several bytes', 'é€😀'.repeat(2_000)],
    ['characters JSON escapes', '"\n\\'.repeat(3_000)],
  ])('cuts a reason of %s so that the whole body fits in 4096 bytes, saying where the rest is', (_what, reason) => {
    // Act
    const body = responseBody(CREATE, { status: 'FAILED', reason, physicalResourceId: 'orders@/' });
    // Assess
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_RESPONSE_BYTES);
    const parsed = JSON.parse(body) as { Reason: string; Status: string };
    expect(parsed.Status).toBe('FAILED');
    expect(parsed.Reason.endsWith('[cut: the whole report is in the log]')).toBe(true);
    expect(reason.startsWith(parsed.Reason.slice(0, -' [cut: the whole report is in the log]'.length))).toBe(true);
    expect(parsed.Reason.length).toBeGreaterThan(500);
  });

  it('leaves a reason that fits whole', () => {
    // Act
    const body = JSON.parse(responseBody(CREATE, { status: 'FAILED', reason: 'y'.repeat(3000), physicalResourceId: 'orders@/' })) as { Reason: string };
    // Assess
    expect(body.Reason).toBe('y'.repeat(3000));
  });
});
