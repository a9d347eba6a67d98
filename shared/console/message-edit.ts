import { bodyText, codePoint } from '../parked/message-format.js';
import { replayCopy } from '../parked/copies.js';
import type { Parked } from '../parked/parked-view.js';
import { ConsoleInputError } from './errors.js';

/** The audit header an edited message carries: `edited-at=<ISO time>; original-body-sha256=<hex>`. */
const EDITED_HEADER = 'boomerang-edited';

/** Bodies above this are not edited in the page: the console is for fixing a message, not for uploads. */
const MAX_EDITED_BODY_BYTES = 1024 * 1024;

type HeaderValue = string | number | boolean;

/**
 * What an operator changed, and only that: the edit is applied onto the parked message, whose body
 * and other headers (tables, arrays and `x-` ones included) travel as they are.
 */
type MessageEdit = {
  /** The whole new body, as text; absent, the parked body is sent byte for byte. */
  readonly body?: string;
  /** Headers added or given a new value. */
  readonly set: Readonly<Record<string, HeaderValue>>;
  /** Headers removed. */
  readonly remove: readonly string[];
};

/** Whether the page may edit a parked body, with its exact text, or why not. */
type BodyEditability = { readonly editable: true; readonly text: string } | { readonly editable: false; readonly reason: string };

/** Content encodings whose bytes are the text itself. */
const PLAIN_ENCODINGS: ReadonlySet<string> = new Set(['identity', 'utf-8', 'utf8']);

/**
 * The body's exact UTF-8 text when the page can edit it and send back the same bytes untouched:
 * not compressed or otherwise encoded, at most {@link MAX_EDITED_BODY_BYTES}, valid UTF-8, and no
 * control character a text box would change (it turns a carriage return into a line feed).
 * @example bodyEditability(parked) // { editable: false, reason: 'its bytes are not valid UTF-8' }
 */
function bodyEditability(message: Parked): BodyEditability {
  const encoding = message.properties.contentEncoding as unknown;
  if (typeof encoding === 'string' && encoding !== '' && !PLAIN_ENCODINGS.has(encoding.toLowerCase())) {
    return { editable: false, reason: `its content encoding is ${JSON.stringify(encoding)}: the bytes are encoded, not plain text` };
  }
  if (message.content.length > MAX_EDITED_BODY_BYTES)
    return { editable: false, reason: `it is ${message.content.length} bytes; the page edits bodies of at most ${MAX_EDITED_BODY_BYTES} bytes (1 MiB)` };
  const decoded = bodyText(message.content);
  if (decoded.kind === 'binary') return { editable: false, reason: decoded.reason };
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's purpose
  const changed = /[\r\u000b\u000c]/.exec(decoded.text);
  if (changed !== null)
    return {
      editable: false,
      reason: `it holds the control character ${codePoint(changed[0])} (at character ${changed.index}), which a text box does not keep as it is`,
    };
  return { editable: true, text: decoded.text };
}

/**
 * What the edit form starts from: the body as {@link bodyEditability} says, and the headers a
 * replay sends, split into those the form shows as JSON values and the others (tables, lists, byte
 * arrays, timestamps, numbers JSON would round), which it names and keeps as they are.
 */
type EditStart = {
  readonly body: BodyEditability;
  readonly headers: Readonly<Record<string, HeaderValue>>;
  readonly otherHeaders: readonly string[];
};

/** The start of an edit of this parked message. */
function editStart(message: Parked, retryHeader: string): EditStart {
  const headers: Record<string, HeaderValue> = {};
  const otherHeaders: string[] = [];
  for (const [name, value] of Object.entries(replayCopy(message, { retryHeader, keepCount: false }).options.headers ?? {})) {
    if (isHeaderValue(value)) headers[name] = value;
    else otherHeaders.push(name);
  }
  return { body: bodyEditability(message), headers, otherHeaders };
}

/**
 * Checks an edit as the browser sent it (`{ body?, headers?: { set?, remove? } }`); throws a
 * `ConsoleInputError` that names the bad part. A header a replay drops (park, broker and retry-count
 * headers) cannot be set: it would not arrive.
 * @example parseMessageEdit({ headers: { set: { tenant: 'acme' }, remove: ['x-trace'] } }, 'x-retry-no')
 */
function parseMessageEdit(input: unknown, retryHeader: string): MessageEdit {
  const raw = objectOf(input, 'the edit must be an object: { body?, headers?: { set?, remove? } }', ['body', 'headers']);
  if (raw.body !== undefined && typeof raw.body !== 'string')
    throw new ConsoleInputError('`body` must be the whole new body, as text (leave it out to keep the parked body)');
  if (raw.body !== undefined && Buffer.byteLength(raw.body) > MAX_EDITED_BODY_BYTES)
    throw new ConsoleInputError(`the edited body is ${Buffer.byteLength(raw.body)} bytes; at most ${MAX_EDITED_BODY_BYTES} are accepted`);
  const headers = objectOf(raw.headers ?? {}, '`headers` must be an object: { set?: { name: value }, remove?: [name] }', ['set', 'remove']);
  const set = objectOf(headers.set ?? {}, '`headers.set` must be an object of header names to text, a number or true/false', undefined);
  const remove = headers.remove ?? [];
  if (!Array.isArray(remove) || !remove.every((name) => typeof name === 'string'))
    throw new ConsoleInputError('`headers.remove` must be a list of header names');
  for (const [name, value] of Object.entries(set)) {
    if (name === '' || Buffer.byteLength(name) > 255) throw new ConsoleInputError(`header name ${JSON.stringify(name)} must be 1 to 255 bytes`);
    if (!isHeaderValue(value))
      throw new ConsoleInputError(
        `header ${JSON.stringify(name)} must be text, true/false or a number (whole numbers up to 2^53: send larger ones as text); got ${JSON.stringify(value)}`,
      );
    if (remove.includes(name)) throw new ConsoleInputError(`header ${JSON.stringify(name)} is both set and removed`);
  }
  // boomerang-edited is a boomerang- header too: the replay sets it itself.
  const dropped = Object.keys(set).filter((name) => droppedOnReplay(name, retryHeader));
  if (dropped.length > 0)
    throw new ConsoleInputError(
      `header(s) ${dropped.map((n) => JSON.stringify(n)).join(', ')} cannot be set: a replay drops park, broker and retry-count headers, and sets ${EDITED_HEADER} itself`,
    );
  return { ...(raw.body === undefined ? {} : { body: raw.body as string }), set: set as MessageEdit['set'], remove: remove as string[] };
}

/**
 * Text, true/false, or a number JSON carries exactly: a whole number past 2^53 has already lost
 * digits in a JSON parse (amqplib decodes a 64-bit header to such a number too).
 */
function isHeaderValue(value: unknown): value is HeaderValue {
  if (typeof value === 'number') return Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value));
  return typeof value === 'string' || typeof value === 'boolean';
}

/** Whether a replay removes this header (asked of the replay itself, so the two never disagree). */
function droppedOnReplay(name: string, retryHeader: string): boolean {
  const probe = { content: Buffer.alloc(0), fields: {}, properties: { headers: { [name]: '' } } } as unknown as Parked;
  return !(name in (replayCopy(probe, { retryHeader, keepCount: false }).options.headers ?? {}));
}

function objectOf(value: unknown, problem: string, allowed: readonly string[] | undefined): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConsoleInputError(problem);
  const unknown = allowed === undefined ? [] : Object.keys(value).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) throw new ConsoleInputError(`${problem}; unknown: ${unknown.join(', ')}`);
  return value as Record<string, unknown>;
}

export { bodyEditability, EDITED_HEADER, editStart, MAX_EDITED_BODY_BYTES, parseMessageEdit };
export type { MessageEdit };
