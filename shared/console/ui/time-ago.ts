/** How long ago a moment was, in the page's words. */

const UNITS = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
] as const;

/**
 * The time since `iso` as the largest whole unit ("5m ago"), "just now" under a second (or a moment
 * a little ahead of this clock: the server's and the browser's clocks differ), "–" for none.
 * @example timeAgo('2026-11-24T00:00:00Z', Date.parse('2026-11-24T02:30:00Z')) // '2h ago'
 */
function timeAgo(iso: string | null, nowMs: number): string {
  if (iso === null) return '–';
  const ms = nowMs - Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  for (const [unit, size] of UNITS) if (ms >= size) return `${Math.floor(ms / size)}${unit} ago`;
  return 'just now';
}

export { timeAgo };
