import { redactUrl } from '../observability/redact.js';

/**
 * What values one option takes: the single check behind the environment reader (`env.ts`), the options
 * given in code (`config-in-code.ts`), the retry policy and the idempotency options. Each range says
 * itself in words (`describeRange`), so every source's error states the same range.
 */
type OptionRange =
  /** A whole number; without `max`, bounded only by the safe integers (a cross-field rule may cap it). */
  | { readonly type: 'integer'; readonly min: number; readonly max?: number }
  /** A decimal number within [min, max]. */
  | { readonly type: 'number'; readonly min: number; readonly max: number }
  /** A decimal number within [0, 1): the jitter (1 would let a delay shrink to 0). */
  | { readonly type: 'fraction' }
  /** One of a fixed set of words. */
  | { readonly type: 'choice'; readonly choices: readonly string[] }
  /** A name (a queue prefix, a header): any text that is not blank; what else a name needs, its reader checks. */
  | { readonly type: 'text' }
  /** An address an HTTP client calls: the credentials come from elsewhere (the broker's), so a URL holding some is refused. */
  | { readonly type: 'http-url' };

/** The range in words, as errors give it: "an integer from 0 to 1000", "one of tiers, exact". */
function describeRange(range: OptionRange): string {
  switch (range.type) {
    case 'integer':
      if (range.max !== undefined) return `an integer from ${range.min} to ${range.max}`;
      return range.min === 1 ? 'a positive integer' : `an integer of at least ${range.min}`;
    case 'number':
      return `a number from ${range.min} to ${range.max}`;
    case 'fraction':
      return 'a fraction from 0 to below 1';
    case 'choice':
      return `one of ${range.choices.join(', ')}`;
    case 'text':
      return 'a text that is not blank';
    case 'http-url':
      return 'an http:// or https:// URL without a user, password, query or fragment';
  }
}

/** Whether `value` (a number or word as code gives it, or as `parseRaw` read it) is within `range`. */
function inRange(range: OptionRange, value: unknown): boolean {
  switch (range.type) {
    case 'integer':
      return Number.isSafeInteger(value) && (value as number) >= range.min && (value as number) <= (range.max ?? Number.MAX_SAFE_INTEGER);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) && value >= range.min && value <= range.max;
    case 'fraction':
      return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value < 1;
    case 'choice':
      return typeof value === 'string' && range.choices.includes(value);
    case 'text':
      return typeof value === 'string' && value.trim() !== '';
    case 'http-url':
      return typeof value === 'string' && isPlainHttpUrl(value);
  }
}

/**
 * The text of a variable as the value it stands for: decimal digits only (`1e3`, `0x10` and `10ms` are
 * NaN, so refused), the word as written for a choice. Not checked against the range: see `inRange`.
 */
function parseRaw(range: OptionRange, raw: string): number | string {
  switch (range.type) {
    case 'integer':
      return /^-?\d+$/.test(raw) ? Number(raw) : Number.NaN;
    case 'number':
    case 'fraction':
      return /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : Number.NaN;
    case 'choice':
    case 'text':
    case 'http-url':
      return raw;
  }
}

function isPlainHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return ['http:', 'https:'].includes(url.protocol) && url.username === '' && url.password === '' && url.search === '' && url.hash === '';
  } catch {
    return false;
  }
}

/** A refused value as an error quotes it: a URL without its password. */
function quoteValue(range: OptionRange, value: string): string {
  return JSON.stringify(range.type === 'http-url' ? redactUrl(value) : value);
}

export { describeRange, inRange, parseRaw, quoteValue };
export type { OptionRange };
