import type { MessageProperties } from 'amqplib';
import { bodyText } from './body-text.js';
import { toParkedView, type Parked } from './parked-view.js';
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
function parkSummary(message: Parked): Record<string, string | number | null> {
  const view = toParkedView(message);
  return {
    error: view.errorName ?? null,
    errorMessage: view.errorMessage ?? null,
    reason: view.parkReason ?? null,
    sourceQueue: view.sourceQueue ?? null,
    parkedAt: view.parkedAt?.toISOString() ?? null,
    attempts: view.attempts ?? null,
  };
}

/** `show` for a human: why it is parked, properties, headers (sorted), then the body preview. */
function formatShow(message: Parked, maxBodyChars: number): string {
  const { headers, ...props } = message.properties as MessageProperties;
  const parked = Object.entries(parkSummary(message)).filter(([, value]) => value !== null);
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
function showEntry(message: Parked, maxBodyChars: number): Record<string, unknown> {
  const { headers, ...props } = message.properties as MessageProperties;
  const body = previewBody(message.content, maxBodyChars);
  return JSON.parse(JSON.stringify({ parked: parkSummary(message), properties: props, headers: headers ?? {}, body }, jsonSafe)) as Record<string, unknown>;
}

export { formatShow, previewBody, showEntry, valueText };
