import { describe, expect, it } from 'vitest';
import { failureEntries, MAX_FAILURES, withFailure } from '../../shared/message/failure-history.js';

const at = (minute: number) => `2026-11-30T10:${String(minute).padStart(2, '0')}:00.000Z`;

describe('the failure history a message carries', () => {
  it.each([
    { before: undefined, entry: { at: at(0), name: 'PartnerDown', message: 'HTTP 503' }, after: `${at(0)} PartnerDown: HTTP 503` },
    { before: '', entry: { at: at(0), name: 'E', message: 'm' }, after: `${at(0)} E: m` },
    { before: `${at(0)} E: first`, entry: { at: at(1), name: 'E', message: 'second' }, after: `${at(0)} E: first\n${at(1)} E: second` },
    { before: Buffer.from(`${at(0)} E: bytes`), entry: { at: at(1), name: 'E', message: 'text' }, after: `${at(0)} E: bytes\n${at(1)} E: text` },
    { before: 42, entry: { at: at(0), name: 'E', message: 'a header of another type starts over' }, after: `${at(0)} E: a header of another type starts over` },
    { before: undefined, entry: { at: at(0), name: 'E', message: 'line one\n  line two\r\n' }, after: `${at(0)} E: line one line two ` },
  ])('$after', ({ before, entry, after }) => {
    expect(withFailure(before, entry)).toBe(after);
  });

  it('keeps the last MAX_FAILURES failures, oldest first, and cuts a long message', () => {
    // Act
    let history: string | undefined;
    for (let minute = 0; minute < 15; minute++)
      history = withFailure(history, { at: at(minute), name: 'E', message: minute === 14 ? 'é'.repeat(500) : `try ${minute}` });
    // Assess
    const entries = failureEntries(history);
    expect(entries).toHaveLength(MAX_FAILURES);
    expect(entries[0]).toEqual({ at: at(5), name: 'E', message: 'try 5' });
    expect(Buffer.byteLength(entries[9]?.message ?? '')).toBeLessThanOrEqual(160);
    expect(entries[9]?.message.endsWith('…[cut]')).toBe(true);
  });

  it('reads a line that is not its own format whole', () => {
    expect(failureEntries('someone wrote this')).toEqual([{ at: '', name: '', message: 'someone wrote this' }]);
    expect(failureEntries(undefined)).toEqual([]);
  });
});
