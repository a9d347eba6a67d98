/**
 * Turns the event's JSON headers back into what amqplib would have handed a consumer: a long string
 * arrives as `{ "bytes": [...] }` and becomes a string (a `Buffer` when the bytes are not UTF-8),
 * numbers and booleans stay, nested tables (`x-death`) and arrays are decoded all the way down.
 * A copy re-published from these headers then carries the same values as one from the pull mode.
 */

/** Headers as amqplib would decode them. */
type DecodedHeaders = Record<string, unknown>;

/**
 * The event's `headers`, decoded; `{}` for null or missing. Anything that is not a table is dropped
 * with a note (said in a warning by the caller), never a throw.
 * @example decodeHeaders({ 'x-retry-no': { bytes: [50] }, n: 10 }, notes) // { 'x-retry-no': '2', n: 10 }
 */
function decodeHeaders(raw: unknown, notes: string[]): DecodedHeaders {
  if (raw === null || raw === undefined) return {};
  if (!isTable(raw)) {
    notes.push(`headers are not a table (${Array.isArray(raw) ? 'an array' : typeof raw}); dropped`);
    return {};
  }
  return decodeTable(raw);
}

function decodeTable(table: Readonly<Record<string, unknown>>): DecodedHeaders {
  const out: DecodedHeaders = {};
  for (const [key, value] of Object.entries(table)) out[key] = decodeValue(value);
  return out;
}

function decodeValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodeValue);
  if (isTable(value)) {
    const bytes = asBytes(value);
    return bytes === undefined ? decodeTable(value) : textOrBuffer(bytes);
  }
  return value;
}

/**
 * The bytes of `{ "bytes": [...] }`, or undefined when the object is a table that only looks alike.
 * Java bytes are signed, so -128..-1 stand for 128..255 (*inferred*: the poller serialises the RabbitMQ
 * Java client's `LongString`; the AWS sample only shows ASCII).
 */
function asBytes(value: Readonly<Record<string, unknown>>): Buffer | undefined {
  const keys = Object.keys(value);
  const { bytes } = value;
  if (keys.length !== 1 || !Array.isArray(bytes)) return undefined;
  if (!bytes.every((b) => Number.isInteger(b) && (b as number) >= -128 && (b as number) <= 255)) return undefined;
  return Buffer.from(bytes.map((b) => (b as number) & 0xff));
}

/** A string when the bytes are valid UTF-8 (amqplib decodes a long string so), else the bytes. */
function textOrBuffer(bytes: Buffer): string | Buffer {
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? text : bytes;
}

function isTable(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export { decodeHeaders, isTable };
