import { describe, expect, it } from 'vitest';
import { filterFromRequest } from '../../shared/console/request-filter.js';

describe('filterFromRequest', () => {
  it('reads the CLI filter names from a query, repeatable ones as lists', () => {
    const filter = filterFromRequest(new URLSearchParams('group=E%7Cm%7Cq&error=A&error=B&older-than=2h&header=tenant%3Dacme&grep=x&message-id=m-1&page=3'));
    expect(filter).toEqual({
      groupKey: 'E|m|q',
      errorNames: ['A', 'B'],
      olderThanMs: 7_200_000,
      newerThanMs: undefined,
      headers: [{ name: 'tenant', value: 'acme' }],
      bodyContains: 'x',
      messageId: 'm-1',
    });
  });

  it('reads the same names from a JSON body and skips empty values', () => {
    expect(filterFromRequest({ 'message-id': 'm-7', error: '', ratePerSecond: 5 })).toMatchObject({ messageId: 'm-7', errorNames: [] });
  });

  it.each([
    [{ 'older-than': 'soon' }, 'older-than must be a duration'],
    [{ group: 7 }, 'filter group must be text'],
    [new URLSearchParams('group=a&group=b'), 'filter group can be given once'],
    [{ header: ['=x'] }, 'header must be name=value'],
  ])('refuses %j with a ConsoleInputError naming the filter', (input, message) => {
    expect(() => filterFromRequest(input)).toThrow(expect.objectContaining({ name: 'ConsoleInputError', message: expect.stringContaining(message) }));
  });
});
