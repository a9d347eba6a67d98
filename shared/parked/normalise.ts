/**
 * Error messages made comparable, so that failures with the same cause fall into one group: a
 * message that names an order id, a URL or a count differs on every message, while its cause does not.
 */

/** Longest normalised message kept: a group key stays short even for an error that dumps a whole body. */
const MAX_NORMALISED_CHARS = 200;

/** Most specific first: a URL holds numbers and ids, a UUID holds hex runs and digits. */
const COLLAPSE: readonly (readonly [RegExp, string])[] = [
  [/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>)]+/gi, '<url>'],
  [/[\w.+-]+@[\w-]+\.[\w.-]+/g, '<email>'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<id>'],
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g, '<time>'],
  // Hex runs of 8+ with a digit (hashes, object ids); tokens where letters sit between digits
  // (`a8f3k2`), whatever their length, so that `order-999` and `order-1000` stay one shape.
  [/\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b/gi, '<id>'],
  [/\b(?=[a-z0-9_]*\d[a-z_]+\d)[a-z0-9_]+\b/gi, '<id>'],
  [/\b0x[0-9a-f]+\b/gi, '<n>'],
  // A number is a digit run that does not follow a letter (`3000ms`, `order-42`, `id=7`: the unit
  // or prefix stays). Digits right after a letter name a thing (`base64`, `sha256`, `utf8`, `ipv6`)
  // and stay, unless they are long enough to be an id (`customer12345`) or start a version (`v2.1`).
  [/(?<![\p{L}\d])\d+(?:\.\d+)?|(?<=\p{L})(?:\d{4,}|\d+(?=\.\d))(?:\.\d+)?/gu, '<n>'],
];

/**
 * The cause of an error message: URLs, e-mail addresses, UUIDs, times, hex and mixed ids and numbers
 * (not the digits of a word such as `base64`) collapsed to placeholders, whitespace squeezed, at most 200 characters.
 * @example normaliseErrorMessage('GET https://api.example.com/orders/42 failed: 503 after 3000ms') // 'GET <url> failed: <n> after <n>ms'
 */
function normaliseErrorMessage(message: string | undefined): string {
  if (message === undefined) return '';
  let out = message;
  for (const [pattern, placeholder] of COLLAPSE) out = out.replace(pattern, placeholder);
  return out.replace(/\s+/g, ' ').trim().slice(0, MAX_NORMALISED_CHARS);
}

/** What a failure group is keyed by. */
type GroupKeyParts = {
  readonly errorName: string | undefined;
  readonly errorMessage: string | undefined;
  readonly sourceQueue: string | undefined;
};

/**
 * A failure group's key: error name, normalised message and source queue, joined by a separator
 * that none of them holds after normalising (a URL-safe text the console puts in links and forms).
 * @example groupKeyOf({ errorName: 'PartnerDown', errorMessage: 'HTTP 503', sourceQueue: 'orders' }) // 'PartnerDown|HTTP <n>|orders'
 */
function groupKeyOf(parts: GroupKeyParts): string {
  const clean = (text: string): string => text.replace(/\|/g, '/');
  return [clean(parts.errorName ?? ''), clean(normaliseErrorMessage(parts.errorMessage)), clean(parts.sourceQueue ?? '')].join('|');
}

export { groupKeyOf, normaliseErrorMessage };
