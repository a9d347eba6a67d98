import { UsageError } from '../errors.js';
import { parseDurationMs } from '../config/duration.js';
import { parseHeaderMatch, type ParkedFilter } from './filters.js';

/** The filter flags shared by `list`, `replay` and `purge` (node:util parseArgs options). */
const FILTER_OPTIONS = {
  error: { type: 'string', multiple: true },
  'older-than': { type: 'string' },
  'newer-than': { type: 'string' },
  header: { type: 'string', multiple: true },
  grep: { type: 'string' },
  'message-id': { type: 'string' },
  group: { type: 'string' },
} as const;

/** Their lines in a command's usage text. */
const FILTER_USAGE = `Filters (all must hold; none = every message):
  --error <name>          error name is <name> (repeat for any of several)
  --older-than <age>      parked at least <age> ago: 500ms, 90s, 15m, 2h, 7d
  --newer-than <age>      parked less than <age> ago
  --header <name=value>   header <name> equals <value> (or --header <name>: is present); repeatable
  --grep <text>           the body contains <text>
  --message-id <id>       the message id is <id>
  --group <key>           in the failure group <key> (the key \`groups\` prints)`;

/** The parsed filter flags. */
type FilterValues = {
  readonly error?: string[];
  readonly 'older-than'?: string;
  readonly 'newer-than'?: string;
  readonly header?: string[];
  readonly grep?: string;
  readonly 'message-id'?: string;
  readonly group?: string;
};

/** Builds the filter from parsed flags; a bad value is a `UsageError` that names its flag. */
function filterFromFlags(values: FilterValues): ParkedFilter {
  const duration = (flag: 'older-than' | 'newer-than'): number | undefined => {
    const raw = values[flag];
    if (raw === undefined) return undefined;
    const ms = parseDurationMs(raw);
    if (ms === undefined) throw new UsageError(`--${flag} must be a duration such as 90s, 15m, 2h or 7d; got ${JSON.stringify(raw)}`);
    return ms;
  };
  const headers = (values.header ?? []).map((raw) => {
    const match = parseHeaderMatch(raw);
    if (match === undefined) throw new UsageError(`--header must be name=value or name; got ${JSON.stringify(raw)}`);
    return match;
  });
  if (values.grep === '') throw new UsageError('--grep needs some text to look for');
  return {
    errorNames: values.error ?? [],
    olderThanMs: duration('older-than'),
    newerThanMs: duration('newer-than'),
    headers,
    bodyContains: values.grep,
    messageId: values['message-id'],
    groupKey: values.group,
  };
}

export { FILTER_OPTIONS, FILTER_USAGE, filterFromFlags };
export type { FilterValues };
