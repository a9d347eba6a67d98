import { describe, expect, it } from 'vitest';
import { regionOfArn } from '../../shared/cli/lambda-invoker.js';

describe('regionOfArn', () => {
  it.each([
    ['arn:aws:lambda:eu-west-1:123456789012:function:orders-operator', 'eu-west-1'],
    ['arn:aws:lambda:us-east-2:123456789012:function:orders-operator:live', 'us-east-2'],
    ['arn:aws-cn:lambda:cn-north-1:123456789012:function:orders-operator', 'cn-north-1'],
    ['orders-operator', undefined],
    ['123456789012:function:orders-operator', undefined],
  ])('reads the region of %j as %j', (target, region) => {
    expect(regionOfArn(target)).toBe(region);
  });
});
