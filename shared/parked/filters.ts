import { groupKeyOf } from './normalise.js';
import type { ParkedView } from './parked-view.js';

/** `--header name=value` (equal, as text) or `--header name` (present). */
type HeaderMatch = { readonly name: string; readonly value: string | undefined };

/** Which parked messages a command acts on. Every given criterion must hold; none given = all. */
type ParkedFilter = {
  /** The error name is one of these (`--error`, repeatable). */
  readonly errorNames: readonly string[];
  /** Parked at least this long ago (`--older-than 2h`). */
  readonly olderThanMs?: number;
  /** Parked less than this long ago (`--newer-than 30m`). */
  readonly newerThanMs?: number;
  /** Every one of these headers matches (`--header`, repeatable). */
  readonly headers: readonly HeaderMatch[];
  /** The body contains this text, byte for byte in UTF-8 (`--grep`). */
  readonly bodyContains?: string;
  /** The message id equals this (`--message-id`, and `show <id>`). */
  readonly messageId?: string;
  /** The failure group's key is this (`--group`, and the console's group actions). */
  readonly groupKey?: string;
};

const EVERYTHING: ParkedFilter = Object.freeze({ errorNames: [], headers: [] });

/** Parses `name=value` (the first `=` splits) or a bare `name`; undefined when the name is empty. */
function parseHeaderMatch(text: string): HeaderMatch | undefined {
  const at = text.indexOf('=');
  const name = (at === -1 ? text : text.slice(0, at)).trim();
  if (name === '') return undefined;
  return { name, value: at === -1 ? undefined : text.slice(at + 1) };
}

/** Whether a parked message passes the filter at time `nowMs`. A message without a parked time passes no age criterion. */
function matchesFilter(filter: ParkedFilter, view: ParkedView, nowMs: number): boolean {
  if (filter.messageId !== undefined && view.messageId !== filter.messageId) return false;
  if (filter.groupKey !== undefined && groupKeyOf(view) !== filter.groupKey) return false;
  if (filter.errorNames.length > 0 && !filter.errorNames.includes(view.errorName ?? '')) return false;
  if (filter.olderThanMs !== undefined || filter.newerThanMs !== undefined) {
    const ageMs = view.parkedAt === undefined ? undefined : nowMs - view.parkedAt.getTime();
    if (ageMs === undefined) return false;
    if (filter.olderThanMs !== undefined && ageMs < filter.olderThanMs) return false;
    if (filter.newerThanMs !== undefined && ageMs >= filter.newerThanMs) return false;
  }
  for (const { name, value } of filter.headers) {
    const actual = view.headers[name];
    if (actual === undefined || actual === null) return false;
    if (value !== undefined && headerText(actual) !== value) return false;
  }
  return filter.bodyContains === undefined || view.body.includes(filter.bodyContains, 0, 'utf8');
}

function headerText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** The filter in words, for prompts and reports: `error is PartnerDown or Timeout, older than 2h`. */
function describeFilter(filter: ParkedFilter): string {
  const parts: string[] = [];
  if (filter.messageId !== undefined) parts.push(`message id ${JSON.stringify(filter.messageId)}`);
  if (filter.groupKey !== undefined) parts.push(`group ${JSON.stringify(filter.groupKey)}`);
  if (filter.errorNames.length > 0) parts.push(`error is ${filter.errorNames.join(' or ')}`);
  if (filter.olderThanMs !== undefined) parts.push(`parked more than ${formatDuration(filter.olderThanMs)} ago`);
  if (filter.newerThanMs !== undefined) parts.push(`parked less than ${formatDuration(filter.newerThanMs)} ago`);
  for (const { name, value } of filter.headers) parts.push(value === undefined ? `header ${name} present` : `header ${name} = ${JSON.stringify(value)}`);
  if (filter.bodyContains !== undefined) parts.push(`body contains ${JSON.stringify(filter.bodyContains)}`);
  return parts.length === 0 ? 'all messages' : parts.join(', ');
}

/**
 * A duration in its largest whole unit, for tables and reports.
 * @example formatDuration(90_000) // '1m'  (floor: 1 min 30 s)
 */
function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size) return `${Math.floor(ms / size)}${unit}`;
  }
  return `${Math.max(0, Math.round(ms))}ms`;
}

export { describeFilter, EVERYTHING, formatDuration, matchesFilter, parseHeaderMatch };
export type { ParkedFilter };
