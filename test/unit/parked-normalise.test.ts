import { describe, expect, it } from 'vitest';
import { groupKeyOf, normaliseErrorMessage } from '../../shared/parked/normalise.js';

describe('normaliseErrorMessage', () => {
  it.each([
    ['GET https://api.example.com/orders/42?x=1 failed', 'GET <url> failed'],
    ['order 9f1c2d3e-1111-2222-3333-444455556666 not found', 'order <id> not found'],
    ['mail to bob@example.com bounced', 'mail to <email> bounced'],
    ['at 2026-11-24T00:15:00.123Z the lock expired', 'at <time> the lock expired'],
    ['object 5f8d0a3e9c1b2a7d not found', 'object <id> not found'],
    ['token ord_a8f3k2x9z1qq expired', 'token <id> expired'],
    ['HTTP 503 after 3000ms', 'HTTP <n> after <n>ms'],
    ['order-42 missing', 'order-<n> missing'],
    ['order-999 and order-1000 and order_12345', 'order-<n> and order-<n> and order_<n>'],
    ['  spaced\n\tout  ', 'spaced out'],
    // Digits that are part of a word stay: they name a thing, not a count.
    ['invalid base64 in body', 'invalid base64 in body'],
    ['sha256 mismatch', 'sha256 mismatch'],
    ['not utf8: byte 0xff', 'not utf8: byte <n>'],
    ['ipv6 address refused', 'ipv6 address refused'],
    ['HTTP2 stream reset, int32 overflow, Float64Array', 'HTTP2 stream reset, int32 overflow, Float64Array'],
    // Numbers still collapse, wherever they stand.
    ['HTTP 503', 'HTTP <n>'],
    ['gave up after 30000ms', 'gave up after <n>ms'],
    ['order-123 missing', 'order-<n> missing'],
    ['user 12345 and id=987', 'user <n> and id=<n>'],
    ['customer12345 not found', 'customer<n> not found'],
    ['connect ECONNREFUSED 127.0.0.1:5672', 'connect ECONNREFUSED <n>.<n>:<n>'],
    ['needs version 1.2.3, has v2.10.0', 'needs version <n>.<n>, has v<n>.<n>'],
    ['blob deadbeef01 corrupt', 'blob <id> corrupt'],
    ['', ''],
  ])('turns %j into %j', (input, expected) => {
    expect(normaliseErrorMessage(input)).toBe(expected);
  });

  it('gives the same text for messages that differ only in numbers, ids and URLs', () => {
    // Prepare
    const a = 'POST https://partner.example/hooks/1 returned 502 for order 17';
    const b = 'POST https://partner.example/hooks/99 returned 504 for order 123456';
    // Act + Assess
    expect(normaliseErrorMessage(a)).toBe(normaliseErrorMessage(b));
  });

  it('keeps at most 200 characters', () => {
    expect(normaliseErrorMessage('word '.repeat(100))).toHaveLength(200);
  });

  it('treats a missing message as empty', () => {
    expect(normaliseErrorMessage(undefined)).toBe('');
  });
});

describe('groupKeyOf', () => {
  it('joins error name, normalised message and source queue', () => {
    expect(groupKeyOf({ errorName: 'PartnerDown', errorMessage: 'HTTP 503', sourceQueue: 'orders' })).toBe('PartnerDown|HTTP <n>|orders');
  });

  it('separates groups by source queue', () => {
    const key = (sourceQueue: string) => groupKeyOf({ errorName: 'E', errorMessage: 'm', sourceQueue });
    expect(key('a')).not.toBe(key('b'));
  });

  it('keeps the separator out of the parts, so two different groups never share a key', () => {
    const a = groupKeyOf({ errorName: 'A|B', errorMessage: 'm', sourceQueue: 'q' });
    const b = groupKeyOf({ errorName: 'A', errorMessage: 'B|m', sourceQueue: 'q' });
    expect(a).not.toBe(b);
  });
});
