import { describe, expect, it } from 'vitest';
import type { ParkedView } from '../../shared/parked/parked-view.js';
import { cut, listEntry, tableHeader, tableRow } from '../../shared/parked/table.js';
import { fakeParkedView } from '../helpers/fakes.js';

const NOW = Date.parse('2026-11-22T10:00:00.000Z');

const VIEW: ParkedView = fakeParkedView(NOW, {
  messageId: 'order-42',
  parkedAt: new Date(NOW - 2 * 3_600_000 - 5000),
  errorMessage: `webhook POST https://partner.example answered 503:\n${'x'.repeat(200)}`,
  body: Buffer.from('{}'),
});

describe('cut', () => {
  it.each([
    ['short', 10, 'short'],
    ['exactly ten', 11, 'exactly ten'],
    ['one\n  two\tthree', 20, 'one two three'],
    ['partner answered 503', 12, 'partner ans…'],
    ['', 5, ''],
  ])('cuts %j to %i characters', (text, width, expected) => {
    expect(cut(text, width)).toBe(expected);
  });
});

describe('tableRow', () => {
  it('lines up under the header, one line, with the age in its largest unit', () => {
    // Act
    const header = tableHeader();
    const row = tableRow(VIEW, NOW);
    // Assess
    expect(row).not.toContain('\n');
    expect(row.indexOf('2h')).toBe(header.search(/\bAGE\b/));
    expect(row.indexOf('PartnerDown')).toBe(header.indexOf('ERROR'));
    expect(row.indexOf('orders.created')).toBe(header.indexOf('ROUTING KEY'));
    expect(row).toContain('webhook POST https://partner.example answered 503…');
  });

  it('shows - for what a message lacks, and the park reason when there is no error message', () => {
    // Act
    const row = tableRow({ ...VIEW, messageId: undefined, parkedAt: undefined, attempts: undefined, errorMessage: undefined }, NOW);
    // Assess
    expect(row.startsWith('- ')).toBe(true);
    expect(row).toContain('retries exhausted: 5 of 5 made');
  });
});

describe('listEntry', () => {
  it('gives scripts the full texts and the age in milliseconds', () => {
    expect(listEntry(VIEW, NOW)).toEqual({
      messageId: 'order-42',
      parkedAt: VIEW.parkedAt?.toISOString(),
      ageMs: 2 * 3_600_000 + 5000,
      attempts: 6,
      errorName: 'PartnerDown',
      errorMessage: VIEW.errorMessage,
      parkReason: 'retries exhausted: 5 of 5 made',
      routingKey: 'orders.created',
      sourceQueue: 'orders',
      bodyBytes: 2,
    });
  });
});
