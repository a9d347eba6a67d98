/**
 * The failures a message has been through, carried in the message itself (`boomerang-failure-history`,
 * natively `x-opt-boomerang-failure-history`): one line per failed attempt, `<ISO time> <error name>:
 * <message>`, oldest first. Bounded, so that a message retried a thousand times does not grow with it:
 * the last `MAX_FAILURES` lines, each message cut to `MAX_MESSAGE_BYTES` on one line. A text header
 * rather than a list of tables: appending to it costs a string per retry, and every client reads it.
 */
import { cutUtf8 } from './utf8.js';

const MAX_FAILURES = 10;
const MAX_MESSAGE_BYTES = 160;

/** One failed attempt, as the history records it. */
type FailureEntry = { readonly at: string; readonly name: string; readonly message: string };

/**
 * `history` (the header's value as a client decoded it: text, or bytes) with one more failure at its end.
 * @example withFailure(undefined, { at: '2026-11-30T10:00:00.000Z', name: 'PartnerDown', message: 'HTTP 503' }) // '2026-11-30T10:00:00.000Z PartnerDown: HTTP 503'
 */
function withFailure(history: unknown, entry: FailureEntry): string {
  const line = `${entry.at} ${entry.name}: ${cutUtf8(entry.message.replace(/\s*[\r\n]+\s*/g, ' '), MAX_MESSAGE_BYTES)}`;
  const previous = textOf(history);
  if (previous === '') return line;
  const lines = previous.split('\n');
  lines.push(line);
  return lines.slice(-MAX_FAILURES).join('\n');
}

/**
 * The entries of a history header, oldest first; a line that is not `<time> <name>: <message>` is
 * kept whole as its message.
 * @example failureEntries('2026-11-30T10:00:00.000Z PartnerDown: HTTP 503') // [{ at: '2026-11-30T10:00:00.000Z', name: 'PartnerDown', message: 'HTTP 503' }]
 */
function failureEntries(history: unknown): FailureEntry[] {
  const text = textOf(history);
  if (text === '') return [];
  return text.split('\n').map((line) => {
    const match = /^(\S+) ([^:]*): (.*)$/s.exec(line);
    return match === null ? { at: '', name: '', message: line } : { at: match[1] as string, name: match[2] as string, message: match[3] as string };
  });
}

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  return Buffer.isBuffer(value) ? value.toString('utf8') : '';
}

export { failureEntries, MAX_FAILURES, withFailure };
