import { describe, expect, it } from 'vitest';
import { headerText, xrayParentOf } from '../../shared/observability/trace-headers.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const W3C_AS_XRAY = { traceId: '1-4bf92f35-77b34da6a3ce929d0e0e4736', parentId: '00f067aa0ba902b7', sampled: true };

describe('xrayParentOf', () => {
  it.each([
    ['a W3C traceparent, split as X-Ray wants it', { traceparent: TRACEPARENT }, W3C_AS_XRAY],
    ['a traceparent as bytes (another client)', { traceparent: Buffer.from(TRACEPARENT) }, W3C_AS_XRAY],
    ['a traceparent not sampled', { traceparent: TRACEPARENT.replace(/01$/, '00') }, { ...W3C_AS_XRAY, sampled: false }],
    [
      'an X-Amzn-Trace-Id header, first',
      { 'X-Amzn-Trace-Id': 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1', traceparent: TRACEPARENT },
      { traceId: '1-5759e988-bd862e3fe1be46a994272793', parentId: '53995c3f42cd8ad8', sampled: true },
    ],
    [
      'an AWSTraceHeader, fields in another order, not sampled',
      { AWSTraceHeader: 'Sampled=0; Root=1-5759e988-bd862e3fe1be46a994272793' },
      { traceId: '1-5759e988-bd862e3fe1be46a994272793', parentId: undefined, sampled: false },
    ],
    ['a malformed X-Ray header, then the traceparent', { 'X-Amzn-Trace-Id': 'Root=nope', traceparent: TRACEPARENT }, W3C_AS_XRAY],
    ['an all-zero trace id', { traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01' }, undefined],
    ['version ff', { traceparent: TRACEPARENT.replace(/^00/, 'ff') }, undefined],
    ['a number', { traceparent: 42 }, undefined],
    ['no trace header', { tenant: 'acme' }, undefined],
  ])('%s', (_name, headers, expected) => {
    expect(xrayParentOf(headers)).toEqual(expected);
  });

  it('no headers at all', () => {
    expect(xrayParentOf(undefined)).toBeUndefined();
  });
});

describe('headerText', () => {
  it.each([
    ['a string', 'abc', 'abc'],
    ['a Buffer', Buffer.from('abc'), 'abc'],
    ['a slice of a larger buffer', Buffer.from('xxabcxx').subarray(2, 5), 'abc'],
    ['a number', 5, undefined],
    ['a table', { a: 1 }, undefined],
  ])('%s', (_name, value, expected) => {
    expect(headerText(value)).toBe(expected);
  });
});
