/**
 * The header table of a delivery as the broker sent it, byte for byte, per header. amqplib decodes a
 * table into plain JS values and so loses what a test of "same type and value" must see: int8, int16,
 * int32 and int64 all become numbers (an int64 above 2^53 rounded), a float and a double look alike,
 * and a long string that is not UTF-8 is decoded with U+FFFD. This tap reads the content-header
 * frames off the connection before amqplib decodes them. Test-only: it leans on amqplib internals
 * (`Connection#recvFrame` and its `rest` buffer, amqplib 2.x).
 */
import type { ChannelModel } from 'amqplib';

/** AMQP 0-9-1 frame type of a content header (the frame that carries the basic properties). */
const FRAME_HEADER = 2;
/** Bytes before a frame's payload: type (1), channel (2), size (4). */
const FRAME_PREFIX = 7;
/** Content header payload before the property flags: class id (2), weight (2), body size (8). */
const HEADER_PREFIX = 12;
/** Property flags, most significant bit first: content-type, content-encoding, headers. */
const CONTENT_TYPE_FLAG = 0x8000;
const CONTENT_ENCODING_FLAG = 0x4000;
const HEADERS_FLAG = 0x2000;

/** Fixed sizes of table values by their type tag (after the tag); `S`, `x`, `F` and `A` carry a 4-byte length instead. */
const FIXED_SIZES: Readonly<Record<string, number>> = { t: 1, b: 1, B: 1, s: 2, u: 2, I: 4, i: 4, l: 8, f: 4, d: 8, D: 5, T: 8, V: 0 };
const SIZED_TAGS = new Set(['S', 'x', 'F', 'A']);

type Tapped = { rest: Buffer; recvFrame: () => unknown };

/**
 * Taps a connection: every content header it receives from now on is kept, its header table split
 * into one raw value (type tag + bytes) per header name. `last()` is the most recent one.
 */
function tapRawHeaders(model: ChannelModel): { last: () => ReadonlyMap<string, Buffer> } {
  const connection = (model as unknown as { connection: Tapped }).connection;
  const recvFrame = connection.recvFrame;
  let last: ReadonlyMap<string, Buffer> = new Map();
  connection.recvFrame = function tappedRecvFrame(this: Tapped): unknown {
    // recvFrame parses the next frame from `rest` (reading more and calling itself when short): peek at it first.
    const { rest } = this;
    if (rest.length >= FRAME_PREFIX && rest[0] === FRAME_HEADER) {
      const size = rest.readUInt32BE(3);
      if (rest.length >= FRAME_PREFIX + size + 1) last = splitTable(headerTable(rest.subarray(FRAME_PREFIX, FRAME_PREFIX + size)));
    }
    return recvFrame.call(this);
  };
  return { last: () => last };
}

/** The raw header table of a content-header payload (empty when the message has no headers). */
function headerTable(payload: Buffer): Buffer {
  const flags = payload.readUInt16BE(HEADER_PREFIX);
  let offset = HEADER_PREFIX + 2;
  if (flags & CONTENT_TYPE_FLAG) offset += 1 + (payload[offset] as number);
  if (flags & CONTENT_ENCODING_FLAG) offset += 1 + (payload[offset] as number);
  if (!(flags & HEADERS_FLAG)) return Buffer.alloc(0);
  const length = payload.readUInt32BE(offset);
  return payload.subarray(offset + 4, offset + 4 + length);
}

/** A field table split into its entries: name → the value's type tag and bytes, exactly as on the wire. */
function splitTable(table: Buffer): Map<string, Buffer> {
  const entries = new Map<string, Buffer>();
  let offset = 0;
  while (offset < table.length) {
    const nameLength = table[offset] as number;
    const name = table.toString('utf8', offset + 1, offset + 1 + nameLength);
    const start = offset + 1 + nameLength;
    const tag = String.fromCharCode(table[start] as number);
    const fixed = FIXED_SIZES[tag];
    let size: number;
    if (fixed !== undefined) size = fixed;
    else if (SIZED_TAGS.has(tag)) size = 4 + table.readUInt32BE(start + 1);
    else throw new Error(`unknown field type tag ${JSON.stringify(tag)} in header ${name}`);
    entries.set(name, table.subarray(start, start + 1 + size));
    offset = start + 1 + size;
  }
  return entries;
}

export { tapRawHeaders };
