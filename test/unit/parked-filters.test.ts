import { describe, expect, it } from 'vitest';
import { describeFilter, EVERYTHING, formatDuration, matchesFilter, parseHeaderMatch, type ParkedFilter } from '../../shared/parked/filters.js';
import { parseDurationMs } from '../../shared/config/duration.js';
import type { ParkedView } from '../../shared/parked/parked-view.js';
import { fakeParkedView } from '../helpers/fakes.js';

const NOW = Date.parse('2026-11-22T10:00:00.000Z');

const view = (overrides: Partial<ParkedView> = {}): ParkedView => fakeParkedView(NOW, overrides);

describe('parseDurationMs', () => {
  it.each<[string, number | undefined]>([
    ['500ms', 500],
    ['90s', 90_000],
    ['15m', 900_000],
    ['2h', 7_200_000],
    ['7d', 604_800_000],
    [' 2h ', 7_200_000],
    ['0s', 0],
    ['2', undefined],
    ['2 h', undefined],
    ['-1h', undefined],
    ['1.5h', undefined],
    ['h', undefined],
    ['2w', undefined],
  ])('reads %j as %s', (text, expected) => {
    expect(parseDurationMs(text)).toBe(expected);
  });
});

describe('parseHeaderMatch', () => {
  it.each([
    ['tenant=acme', { name: 'tenant', value: 'acme' }],
    ['query=a=b', { name: 'query', value: 'a=b' }],
    ['tenant=', { name: 'tenant', value: '' }],
    ['tenant', { name: 'tenant', value: undefined }],
    ['=acme', undefined],
    ['', undefined],
  ])('reads %j', (text, expected) => {
    expect(parseHeaderMatch(text)).toEqual(expected);
  });
});

describe('matchesFilter', () => {
  it.each<[string, Partial<ParkedFilter>, Partial<ParkedView>, boolean]>([
    ['no criterion matches everything', {}, {}, true],
    ['the error name', { errorNames: ['PartnerDown'] }, {}, true],
    ['one of several error names', { errorNames: ['Timeout', 'PartnerDown'] }, {}, true],
    ['another error name', { errorNames: ['Timeout'] }, {}, false],
    ['a message without an error name against an error filter', { errorNames: ['PartnerDown'] }, { errorName: undefined }, false],
    ['older than, when older', { olderThanMs: 2 * 3_600_000 }, {}, true],
    ['older than, when younger', { olderThanMs: 4 * 3_600_000 }, {}, false],
    ['newer than, when younger', { newerThanMs: 4 * 3_600_000 }, {}, true],
    ['newer than, when older', { newerThanMs: 2 * 3_600_000 }, {}, false],
    ['an age window', { olderThanMs: 3_600_000, newerThanMs: 4 * 3_600_000 }, {}, true],
    ['an age criterion without a parked time', { olderThanMs: 1 }, { parkedAt: undefined }, false],
    ['a header value', { headers: [{ name: 'tenant', value: 'acme' }] }, {}, true],
    ['a header value that differs', { headers: [{ name: 'tenant', value: 'other' }] }, {}, false],
    ['a number header as text', { headers: [{ name: 'x-retry-no', value: '5' }] }, {}, true],
    ['a byte-array header as text', { headers: [{ name: 'region', value: 'eu' }] }, {}, true],
    ['a header that is present', { headers: [{ name: 'tenant', value: undefined }] }, {}, true],
    ['a header that is missing', { headers: [{ name: 'traceparent', value: undefined }] }, {}, false],
    [
      'all of several headers, one failing',
      {
        headers: [
          { name: 'tenant', value: 'acme' },
          { name: 'region', value: 'us' },
        ],
      },
      {},
      false,
    ],
    ['text in the body, UTF-8', { bodyContains: 'Ünal' }, {}, true],
    ['text not in the body', { bodyContains: 'Bob' }, {}, false],
    ['the message id', { messageId: 'order-1' }, {}, true],
    ['another message id', { messageId: 'order-2' }, {}, false],
    [
      'every criterion at once',
      { errorNames: ['PartnerDown'], olderThanMs: 1000, headers: [{ name: 'tenant', value: 'acme' }], bodyContains: 'orderId' },
      {},
      true,
    ],
  ])('%s → %s', (_name, filter, overrides, expected) => {
    expect(matchesFilter({ ...EVERYTHING, ...filter }, view(overrides), NOW)).toBe(expected);
  });
});

describe('describeFilter', () => {
  it('says "all messages" without a criterion', () => {
    expect(describeFilter(EVERYTHING)).toBe('all messages');
  });

  it('names every criterion', () => {
    // Prepare
    const filter: ParkedFilter = {
      errorNames: ['A', 'B'],
      olderThanMs: 7_200_000,
      headers: [
        { name: 'tenant', value: 'acme' },
        { name: 'trace', value: undefined },
      ],
      bodyContains: 'vip',
    };
    // Act
    const text = describeFilter(filter);
    // Assess
    expect(text).toBe('error is A or B, parked more than 2h ago, header tenant = "acme", header trace present, body contains "vip"');
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0ms'],
    [999, '999ms'],
    [1000, '1s'],
    [90_000, '1m'],
    [3_600_000, '1h'],
    [86_400_000 * 3, '3d'],
    [-5, '0ms'],
  ])('formats %i ms as %s', (ms, expected) => {
    expect(formatDuration(ms)).toBe(expected);
  });
});
