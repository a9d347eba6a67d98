import { describe, expect, it } from 'vitest';
import { groupsReport, groupsTable, GroupTally, MAX_GROUPS } from '../../shared/parked/groups.js';
import type { ParkedView } from '../../shared/parked/parked-view.js';

function view(overrides: Partial<ParkedView>): ParkedView {
  return {
    messageId: 'm-1',
    parkedAt: new Date('2026-11-24T00:00:00Z'),
    attempts: 1,
    errorName: 'PartnerDown',
    errorMessage: 'HTTP 503',
    errorFields: undefined,
    parkReason: undefined,
    sourceQueue: 'orders',
    brokerSourceQueue: undefined,
    routingKey: 'orders',
    headers: {},
    body: Buffer.from('{}'),
    ...overrides,
  };
}

describe('GroupTally', () => {
  it('counts the parks of the last 24 hours by hour, the last hour last, and leaves out older and future ones', () => {
    // Prepare
    const now = Date.parse('2026-11-24T12:00:00Z');
    const tally = new GroupTally(now);
    // Act
    for (const minutesAgo of [1, 59, 61, 23 * 60 + 59, 24 * 60 + 1, -5]) tally.add(view({ parkedAt: new Date(now - minutesAgo * 60_000) }));
    // Assess
    const [group] = tally.result();
    expect(group?.count).toBe(6);
    expect(group?.lastDayByHour).toEqual([1, ...Array.from({ length: 21 }, () => 0), 1, 2]);
  });

  it('counts messages per cause, with first and last seen, parks per hour over the last day and the first message as the sample', () => {
    // Prepare: the walk at 01:30, all four parked between one and two hours before it
    const tally = new GroupTally(Date.parse('2026-11-24T01:30:00Z'));
    // Act
    tally.add(view({ messageId: 'a', errorMessage: 'HTTP 503', parkedAt: new Date('2026-11-24T00:05:00Z') }));
    tally.add(view({ messageId: 'b', errorMessage: 'HTTP 502', parkedAt: new Date('2026-11-24T00:01:00Z') }));
    tally.add(view({ messageId: 'c', errorName: 'Invalid', errorMessage: 'field 3 missing', parkedAt: new Date('2026-11-24T00:09:00Z') }));
    tally.add(view({ messageId: 'd', errorMessage: 'HTTP 500', parkedAt: new Date('2026-11-24T00:03:00Z') }));
    // Assess
    expect(tally.result()).toEqual([
      {
        key: 'PartnerDown|HTTP <n>|orders',
        errorName: 'PartnerDown',
        message: 'HTTP <n>',
        sourceQueue: 'orders',
        count: 3,
        firstSeen: '2026-11-24T00:01:00.000Z',
        lastSeen: '2026-11-24T00:05:00.000Z',
        sample: { messageId: 'a', errorMessage: 'HTTP 503' },
        lastDayByHour: [...Array.from({ length: 22 }, () => 0), 3, 0],
      },
      {
        key: 'Invalid|field <n> missing|orders',
        errorName: 'Invalid',
        message: 'field <n> missing',
        sourceQueue: 'orders',
        count: 1,
        firstSeen: '2026-11-24T00:09:00.000Z',
        lastSeen: '2026-11-24T00:09:00.000Z',
        sample: { messageId: 'c', errorMessage: 'field 3 missing' },
        lastDayByHour: [...Array.from({ length: 22 }, () => 0), 1, 0],
      },
    ]);
  });

  it('keeps first and last seen null when no message carried a park time, and fills them from a later one', () => {
    const tally = new GroupTally();
    tally.add(view({ parkedAt: undefined }));
    expect(tally.result()[0]).toMatchObject({ firstSeen: null, lastSeen: null });
    tally.add(view({ parkedAt: new Date('2026-11-24T00:02:00Z') }));
    expect(tally.result()[0]).toMatchObject({ count: 2, firstSeen: '2026-11-24T00:02:00.000Z', lastSeen: '2026-11-24T00:02:00.000Z' });
  });

  it('holds at most MAX_GROUPS groups plus one overflow group that counts the rest', () => {
    const tally = new GroupTally();
    for (let i = 0; i < MAX_GROUPS + 5; i++) tally.add(view({ errorName: `E${'x'.repeat(i % 7)}${String.fromCharCode(65 + (i % 26))}${i}` }));
    const groups = tally.result();
    expect(groups).toHaveLength(MAX_GROUPS + 1);
    expect(groups.reduce((sum, g) => sum + g.count, 0)).toBe(MAX_GROUPS + 5);
    expect(groups[0]).toMatchObject({ count: 5, errorName: null });
  });
});

describe('groupsReport', () => {
  it('counts the grouped messages and keeps the parking lot size', () => {
    const tally = new GroupTally();
    tally.add(view({}));
    tally.add(view({}));
    const report = groupsReport('orders.parked', { total: 5, visited: 5, kept: 5, moved: 0, deleted: 0, notMoved: 0, ending: 'done', groups: tally.result() });
    expect(report).toMatchObject({ queue: 'orders.parked', parked: 5, grouped: 2 });
    expect(groupsTable(report)).toContain('--group "PartnerDown|HTTP <n>|orders"');
  });
});
