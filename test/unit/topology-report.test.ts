import { describe, expect, it } from 'vitest';
import { formatReport } from '../../shared/topology/report.js';

describe('formatReport', () => {
  it('prints one aligned line per item with the difference or the detail', () => {
    // Prepare
    const report = {
      ok: false,
      items: [
        { kind: 'queue', name: 'orders', status: 'ok', detail: 'exists' },
        { kind: 'queue', name: 'orders.delay.1000ms', status: 'different', argument: 'x-message-ttl', expected: '1000', actual: '2000' },
        { kind: 'exchange', name: 'd', status: 'missing' },
      ],
    } as const;
    // Act
    const text = formatReport(report);
    // Assess
    expect(text.split('\n')).toEqual([
      'ok         queue     orders               exists',
      'different  queue     orders.delay.1000ms  x-message-ttl: expected 1000, found 2000',
      'missing    exchange  d',
    ]);
  });

  it('prints nothing for an empty report', () => {
    expect(formatReport({ items: [] })).toBe('');
  });
});
