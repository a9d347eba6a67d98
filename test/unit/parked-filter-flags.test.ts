import { describe, expect, it } from 'vitest';
import { UsageError } from '../../shared/errors.js';
import { filterFromFlags, type FilterValues } from '../../shared/parked/filter-flags.js';

describe('filterFromFlags', () => {
  it('builds the filter from every flag', () => {
    // Act
    const filter = filterFromFlags({
      error: ['A', 'B'],
      'older-than': '2h',
      'newer-than': '7d',
      header: ['tenant=acme', 'trace'],
      grep: 'vip',
      'message-id': 'm-1',
    });
    // Assess
    expect(filter).toEqual({
      errorNames: ['A', 'B'],
      olderThanMs: 7_200_000,
      newerThanMs: 604_800_000,
      headers: [
        { name: 'tenant', value: 'acme' },
        { name: 'trace', value: undefined },
      ],
      bodyContains: 'vip',
      messageId: 'm-1',
    });
  });

  it('matches everything without flags', () => {
    expect(filterFromFlags({})).toMatchObject({ errorNames: [], headers: [] });
  });

  it.each<[FilterValues, string]>([
    [{ 'older-than': '2 hours' }, '--older-than'],
    [{ 'newer-than': '-1d' }, '--newer-than'],
    [{ header: ['=x'] }, '--header'],
    [{ grep: '' }, '--grep'],
  ])('rejects %j with a usage error naming %s', (values, flag) => {
    expect(() => filterFromFlags(values)).toThrow(UsageError);
    expect(() => filterFromFlags(values)).toThrow(flag);
  });
});
