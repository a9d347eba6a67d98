import { describe, expect, it } from 'vitest';
import { parseJavaDate } from '../../shared/event/java-date.js';

describe('parseJavaDate', () => {
  it.each<[string, string, number | undefined]>([
    ['the AWS sample (JDK 9+ format)', 'Jan 1, 1970, 12:33:41 AM', 2021],
    ['JDK 8 format, no comma after the year', 'Jan 1, 1970 12:33:41 AM', 2021],
    ['JDK 20+ narrow no-break space before PM', 'Nov 22, 2026, 10:15:30\u202fPM', Date.UTC(2026, 10, 22, 22, 15, 30) / 1000],
    ['a no-break space', 'Nov 22, 2026, 10:15:30\u00a0AM', Date.UTC(2026, 10, 22, 10, 15, 30) / 1000],
    ['12 PM is noon', 'Mar 5, 2025, 12:00:00 PM', Date.UTC(2025, 2, 5, 12) / 1000],
    ['12 AM is midnight', 'Mar 5, 2025, 12:00:00 AM', Date.UTC(2025, 2, 5, 0) / 1000],
    ['lower case', 'dec 31, 1999, 11:59:59 pm', Date.UTC(1999, 11, 31, 23, 59, 59) / 1000],
    ['ISO 8601', '2026-11-22T10:15:30.900Z', Date.UTC(2026, 10, 22, 10, 15, 30) / 1000],
    ['Feb 30 is no date', 'Feb 30, 2025, 1:00:00 AM', undefined],
    ['hour 13 is no 12-hour clock', 'Jan 1, 2025, 13:00:00 PM', undefined],
    ['an unknown month', 'Foo 1, 2025, 1:00:00 AM', undefined],
    ['free text', 'yesterday', undefined],
    ['an empty string', '', undefined],
    ['epoch digits', '1700000000', undefined],
    ['before 1970', 'Dec 31, 1969, 11:59:59 PM', undefined],
  ])('%s: %j → %s', (_case, text, expected) => {
    // Act
    const seconds = parseJavaDate(text);
    // Assess
    expect(seconds).toBe(expected);
  });
});
