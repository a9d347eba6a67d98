/**
 * What a thrown value carries beyond its name and message, kept with a parked message so that an
 * operator sees the failure whole: an HTTP client's `{ status: 503, detail: … }`, an Error subclass's
 * `code` and `response`, the name and message of its `cause`. Written as JSON, bounded, with AMQP
 * passwords redacted as in the logs. Computed only when a message is parked: a retry copy records no error.
 */
import { cutUtf8 } from '../message/utf8.js';
import { redactText } from '../observability/redact.js';

/** At most this many bytes of JSON are kept (a header, or a native annotation, per parked message). */
const ERROR_FIELDS_MAX_BYTES = 2048;

/** A value's own fields that `name`, `message` and `stack` already record. */
const RECORDED_APART = new Set(['name', 'message', 'stack']);

/**
 * The JSON of what `thrown` carries besides its name, message and stack; undefined when it carries
 * nothing more (a plain Error, a string). Cut to `ERROR_FIELDS_MAX_BYTES` with a trailing `…` (then
 * no longer valid JSON, but still readable); a value JSON cannot write (a cycle, a getter that
 * throws) is described, not thrown again.
 * @example errorFields({ status: 503, detail: 'upstream timeout' }) // '{"status":503,"detail":"upstream timeout"}'
 */
function errorFields(thrown: unknown): string | undefined {
  if (typeof thrown !== 'object' || thrown === null) return undefined;
  const own = ownFieldsOf(thrown);
  // `cause` is not enumerable when set by the Error constructor.
  const { cause } = thrown as { cause?: unknown };
  if (cause !== undefined && !Object.hasOwn(own, 'cause')) own.cause = cause;
  if (Object.keys(own).length === 0) return undefined;
  let json: string;
  try {
    json = JSON.stringify(own, jsonFields) ?? '';
  } catch (error) {
    json = JSON.stringify({ unwritable: `its fields could not be written as JSON: ${(error as Error).message}`, keys: Object.keys(own) });
  }
  return cut(redactText(json));
}

/**
 * A message for a thrown value that has no `message` of its own: the JSON of the value itself
 * (bounded, redacted), so that a parked plain object says what it was; '' when JSON cannot write it.
 * @example messageOfObject({ status: 503 }) // '{"status":503}'
 */
function messageOfObject(thrown: object): string {
  try {
    return cut(redactText(JSON.stringify(thrown, jsonFields) ?? ''));
  } catch {
    return '';
  }
}

/** JSON.stringify's replacer: bigints as text, errors (a `cause`) as their name and message, functions left out. */
function jsonFields(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Error) return { name: value.name, message: value.message, ...ownFieldsOf(value) };
  return value;
}

/** A value's own enumerable fields but those `name`, `message` and `stack` record. */
function ownFieldsOf(value: object): Record<string, unknown> {
  const own: Record<string, unknown> = {};
  for (const key of Object.keys(value)) if (!RECORDED_APART.has(key)) own[key] = (value as Record<string, unknown>)[key];
  return own;
}

/** Cut to `ERROR_FIELDS_MAX_BYTES` on a character, marked with a bare `…`. */
function cut(json: string): string {
  return cutUtf8(json, ERROR_FIELDS_MAX_BYTES, '…');
}

export { ERROR_FIELDS_MAX_BYTES, errorFields, messageOfObject };
