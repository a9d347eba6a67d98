/**
 * `Retry-After` (RFC 9110 §10.2.3) is either delta-seconds (`120`) or an HTTP-date. Every HTTP-date
 * form starts with a day name, and we require it: V8's `Date.parse` also reads `-1` and `1.5` as dates
 * in 2001, which would turn garbage into a long wait.
 */
const HTTP_DATE_START = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/;
const DELTA_SECONDS = /^\d+$/;

/**
 * Turns a `Retry-After` header value into a delay in milliseconds from `nowMs`.
 * Pure: the caller passes the clock. Returns `undefined` when the value is absent or invalid
 * (the caller then falls back to its own backoff), and `0` for a date already past.
 * @example parseRetryAfterMs('120', Date.now()) // 120_000
 * @example parseRetryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT', Date.now()) // 0 (in the past)
 */
function parseRetryAfterMs(value: string | null, nowMs: number): number | undefined {
  const text = value?.trim() ?? '';
  if (DELTA_SECONDS.test(text)) {
    const ms = Number(text) * 1000;
    // Hundreds of digits overflow to Infinity; no caller can wait that long, so it is not a hint.
    return Number.isSafeInteger(ms) ? ms : undefined;
  }
  if (!HTTP_DATE_START.test(text)) return undefined;
  // asctime dates carry no zone; RFC 9110 says they are GMT, while Date.parse would read local time.
  const dateMs = Date.parse(text.endsWith('GMT') ? text : `${text} GMT`);
  return Number.isNaN(dateMs) ? undefined : Math.max(0, dateMs - nowMs);
}

export { parseRetryAfterMs };
