import { isNamedError, type UsageError } from '../errors.js';
import { filterFromFlags, type FilterValues } from '../parked/filter-flags.js';
import type { ParkedFilter } from '../parked/filters.js';
import { ConsoleInputError } from './errors.js';

/** The CLI's filter names, as query parameters or JSON fields: `error` and `header` may repeat. */
const REPEATABLE = new Set(['error', 'header']);
const SINGLE = new Set(['older-than', 'newer-than', 'grep', 'message-id', 'group']);

/**
 * A filter from a request, with the CLI's flag names and checks (`?group=...&older-than=2h`, or the
 * same keys in a JSON body); a bad value is a `ConsoleInputError` that names it.
 * @example filterFromRequest(new URLSearchParams('error=PartnerDown&older-than=2h'))
 */
function filterFromRequest(input: URLSearchParams | Readonly<Record<string, unknown>>): ParkedFilter {
  const values: Record<string, string | string[]> = {};
  const entries: [string, unknown][] = input instanceof URLSearchParams ? [...input.keys()].map((k) => [k, input.getAll(k)]) : Object.entries(input);
  for (const [name, raw] of entries) {
    if (!REPEATABLE.has(name) && !SINGLE.has(name)) continue;
    const list = (Array.isArray(raw) ? raw : [raw]).filter((v) => v !== undefined && v !== null && v !== '');
    if (list.length === 0) continue;
    if (list.some((v) => typeof v !== 'string')) throw new ConsoleInputError(`filter ${name} must be text; got ${JSON.stringify(raw)}`);
    if (SINGLE.has(name) && list.length > 1) throw new ConsoleInputError(`filter ${name} can be given once; got ${list.length}`);
    values[name] = REPEATABLE.has(name) ? (list as string[]) : (list[0] as string);
  }
  try {
    return filterFromFlags(values as FilterValues);
  } catch (error) {
    if (isNamedError<UsageError>(error, 'UsageError')) throw new ConsoleInputError(error.message.replace(/--/g, ''), { cause: error });
    throw error;
  }
}

/** Whether `name` is one of the filter names a request may carry. */
function isFilterName(name: string): boolean {
  return REPEATABLE.has(name) || SINGLE.has(name);
}

/** The body's `expectedCount`: how many messages the operator saw and confirmed, the most an action may take. */
function confirmedCount(body: Readonly<Record<string, unknown>>): number {
  const expected = body.expectedCount;
  if (typeof expected !== 'number' || !Number.isSafeInteger(expected) || expected < 1) {
    throw new ConsoleInputError(
      `expectedCount must be the number of messages the operator confirmed (a whole number of at least 1); got ${JSON.stringify(expected)}`,
    );
  }
  return expected;
}

export { confirmedCount, filterFromRequest, isFilterName };
