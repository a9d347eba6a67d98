/**
 * The event source writes a message's `timestamp` the way Java's default date format prints it:
 * `"Jan 1, 1970, 12:33:41 AM"` (JDK 9+), `"Jan 1, 1970 12:33:41 AM"` (JDK 8), and since JDK 20 with a
 * narrow no-break space (U+202F) before AM/PM. No zone is printed; Lambda pollers run in UTC
 * (*inferred*: the AWS sample's 12:33:41 AM on Jan 1, 1970 is 2021 s, a plausible test value).
 */

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'] as const;

// "Jan 1, 1970, 12:33:41 AM", the comma after the year optional; no-break spaces are turned into spaces first.
const JAVA_DATE = /^([a-z]{3})[a-z]*\.?\s+(\d{1,2}),\s*(\d{4}),?\s+(\d{1,2}):(\d{2}):(\d{2})\s*([ap])\.?\s?m\.?$/i;

/**
 * Seconds since the epoch (the unit of an AMQP timestamp) of a Java-style date string, read as UTC;
 * an ISO-8601 string is accepted too. Undefined for anything else or before 1970, never a throw.
 * @example parseJavaDate('Jan 1, 1970, 12:33:41 AM') // 2021
 */
function parseJavaDate(text: string): number | undefined {
  const trimmed = text.trim();
  const java = JAVA_DATE.exec(trimmed.replace(/[\u00a0\u202f]/g, ' '));
  if (java) return fromParts(java.slice(1) as string[]);
  if (/^\d{4}-\d{2}-\d{2}T/.test(trimmed)) {
    const ms = Date.parse(trimmed);
    return Number.isNaN(ms) || ms < 0 ? undefined : Math.floor(ms / 1000);
  }
  return undefined;
}

function fromParts([monthName, day, year, hour, minute, second, half]: string[]): number | undefined {
  const month = MONTHS.indexOf(String(monthName).toLowerCase() as (typeof MONTHS)[number]);
  const [d, y, h, m, s] = [day, year, hour, minute, second].map(Number) as [number, number, number, number, number];
  if (month === -1 || h < 1 || h > 12 || m > 59 || s > 59) return undefined;
  // 12 AM is midnight, 12 PM is noon.
  const hour24 = (h % 12) + (half?.toLowerCase() === 'p' ? 12 : 0);
  const ms = Date.UTC(y, month, d, hour24, m, s);
  // Date.UTC rolls Feb 30 over to March: such a date was not a date.
  if (new Date(ms).getUTCDate() !== d || ms < 0) return undefined;
  return ms / 1000;
}

export { parseJavaDate };
