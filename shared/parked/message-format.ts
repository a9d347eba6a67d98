import type { MessageProperties } from 'amqplib';
import { type Parked, type ParkedView, toParkedView } from './parked-view.js';
import { prettyJson } from './pretty-json.js';

/** How `show` renders a body: pretty JSON, text, or base64 for bytes that are not UTF-8 text. */
type BodyPreview = { readonly kind: 'json' | 'text' | 'binary'; readonly text: string; readonly bytes: number; readonly cut: boolean };

/** Bodies above this are not laid out as JSON for the preview (they are still shown as text). */
const MAX_JSON_PARSE_BYTES = 1024 * 1024;

/**
 * The body for a human: JSON re-indented (every value as written), else text when it is UTF-8,
 * else base64; at most `maxChars`.
 */
function previewBody(body: Buffer, maxChars: number): BodyPreview {
  const decoded = bodyText(body);
  const pretty = decoded.kind === 'text' && body.length <= MAX_JSON_PARSE_BYTES ? prettyJson(decoded.text) : undefined;
  const kind: BodyPreview['kind'] = pretty !== undefined ? 'json' : decoded.kind;
  const full = pretty ?? (decoded.kind === 'text' ? decoded.text : body.toString('base64'));
  return { kind, text: full.slice(0, maxChars), bytes: body.length, cut: full.length > maxChars };
}

/** A header or property value as text: timestamps as ISO dates, tables and lists as JSON. */
function valueText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'object' && value !== null) return JSON.stringify(value, jsonSafe);
  return String(value);
}

/** JSON for header tables: AMQP timestamps as ISO dates, byte arrays as text, bigints as strings. */
function jsonSafe(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'object' && value !== null) {
    const tagged = value as { '!'?: unknown; value?: unknown; type?: unknown; data?: unknown };
    if (tagged['!'] === 'timestamp' && typeof tagged.value === 'number') return new Date(tagged.value * 1000).toISOString();
    // Buffer#toJSON has already run by the time the replacer sees it.
    if (tagged.type === 'Buffer' && Array.isArray(tagged.data)) return Buffer.from(tagged.data as number[]).toString('utf8');
  }
  return value;
}

function section(title: string, entries: [string, unknown][]): string[] {
  if (entries.length === 0) return [title, '  (none)'];
  const width = Math.min(32, Math.max(...entries.map(([name]) => name.length)));
  const rows = entries.map(([name, value]) => `  ${name.padEnd(width)}  ${valueText(value).replace(/\n/g, `\n  ${' '.repeat(width)}  `)}`);
  return [title, ...rows];
}

/**
 * Why it is parked (the error's name and message, the reason) and where `replay` sends it, read
 * from the headers like `list` does: the raw
 * `x-first-death-*` headers below name the first dead-lettering, which is not always the one that parked it.
 */
function parkSummary(view: ParkedView): Record<string, string | number | null> {
  return {
    error: view.errorName ?? null,
    errorMessage: view.errorMessage ?? null,
    errorFields: view.errorFields ?? null,
    reason: view.parkReason ?? null,
    sourceQueue: view.sourceQueue ?? null,
    parkedAt: view.parkedAt?.toISOString() ?? null,
    attempts: view.attempts ?? null,
    // The broker parked it: no Boomerang header could go with it, so the fields above are its note's.
    recordedIn: view.parkNote === undefined ? null : 'its park note (the broker parked the message as it was)',
  };
}

/** `show` for a human: why it is parked (`view`: with its park note), properties, headers (sorted), then the body preview. */
function formatShow(message: Parked, maxBodyChars: number, view: ParkedView = toParkedView(message)): string {
  const { headers, ...props } = message.properties as MessageProperties;
  const parked = Object.entries(parkSummary(view)).filter(([, value]) => value !== null);
  const definedProps = Object.entries(props).filter(([, value]) => value !== undefined);
  const sortedHeaders = Object.entries(headers ?? {}).sort(([a], [b]) => a.localeCompare(b));
  const body = previewBody(message.content, maxBodyChars);
  const more = body.cut ? `\n  … (cut at ${maxBodyChars} characters)` : '';
  return [
    ...section('Parked', parked),
    ...section('Properties', definedProps),
    ...section('Headers', sortedHeaders),
    `Body (${body.bytes} bytes, ${body.kind === 'binary' ? 'binary, as base64' : body.kind})`,
    `  ${body.text.replace(/\n/g, '\n  ')}${more}`,
  ].join('\n');
}

/** `show --json`: why it is parked, properties, headers and the body (JSON, text or base64) as one object. */
function showEntry(message: Parked, maxBodyChars: number, view: ParkedView = toParkedView(message)): Record<string, unknown> {
  const { headers, ...props } = message.properties as MessageProperties;
  const body = previewBody(message.content, maxBodyChars);
  return JSON.parse(JSON.stringify({ parked: parkSummary(view), properties: props, headers: headers ?? {}, body }, jsonSafe)) as Record<string, unknown>;
}

/**
 * The body's exact UTF-8 text, or why it is not text: `show` and the console print a body as text
 * only when the text is exactly its bytes, and the console edits only such a body.
 */
type BodyText = { readonly kind: 'text'; readonly text: string } | { readonly kind: 'binary'; readonly reason: string };

/** C0 control characters other than tab, line feed, vertical tab, form feed and carriage return: printed as text they garble a terminal. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's purpose
const BINARY_CONTROL = /[\u0000-\u0008\u000e-\u001f]/;

/**
 * The body as UTF-8 text when decoding it gives back the same bytes and it holds no control
 * characters (tab, line feed, carriage return, vertical tab and form feed excepted).
 * @example bodyText(Buffer.from([0xff])) // { kind: 'binary', reason: 'its bytes are not valid UTF-8' }
 */
function bodyText(body: Buffer): BodyText {
  const text = body.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(body)) return { kind: 'binary', reason: 'its bytes are not valid UTF-8' };
  const control = BINARY_CONTROL.exec(text);
  if (control !== null) return { kind: 'binary', reason: `it holds the control character ${codePoint(control[0])} (at character ${control.index})` };
  return { kind: 'text', text };
}

/** `U+000D` for a carriage return. */
function codePoint(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

export { bodyText, codePoint, formatShow, previewBody, showEntry, valueText };
