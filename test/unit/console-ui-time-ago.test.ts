import { describe, expect, it } from 'vitest';
import { timeAgo } from '../../shared/console/ui/time-ago.js';

const NOW = Date.parse('2026-11-24T12:00:00.000Z');

describe('timeAgo', () => {
  it.each([
    ['2026-11-24T12:00:00.000Z', 'just now'],
    ['2026-11-24T11:59:59.500Z', 'just now'],
    ['2026-11-24T12:00:02.000Z', 'just now'],
    ['2026-11-24T11:59:59.000Z', '1s ago'],
    ['2026-11-24T11:59:15.000Z', '45s ago'],
    ['2026-11-24T11:55:00.000Z', '5m ago'],
    ['2026-11-24T09:30:00.000Z', '2h ago'],
    ['2026-11-21T12:00:00.000Z', '3d ago'],
  ])('says %s is %j', (iso, expected) => {
    expect(timeAgo(iso, NOW)).toBe(expected);
  });

  it('shows a dash for no time, and an unreadable time as it is', () => {
    expect(timeAgo(null, NOW)).toBe('–');
    expect(timeAgo('yesterday', NOW)).toBe('yesterday');
  });
});
