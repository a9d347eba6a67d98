/**
 * Another AMQP 0-9-1 client: a plain socket that publishes one message with a header table given
 * byte for byte. amqplib can only send what it encodes from JS values (never an int32 5, a float, an
 * unsigned type, or a long string that is not UTF-8), and what reaches a parking lot from other
 * producers (or by dead-lettering) can hold any of them. Test-only, confirmed, no heartbeats.
 */
import { connect, type Socket } from 'node:net';
import { AMQP_URL } from './broker.js';

/** One header: its name, AMQP type tag and the value's bytes after the tag (`S`, `x`, `F`, `A` include their 4-byte length). */
type RawHeader = readonly [name: string, tag: string, value: Buffer];

/** A field table from raw entries (what goes after the table's own 4-byte length). */
function rawTable(headers: readonly RawHeader[]): Buffer {
  return Buffer.concat(
    headers.map(([name, tag, value]) => Buffer.concat([Buffer.from([Buffer.byteLength(name)]), Buffer.from(name), Buffer.from(tag, 'latin1'), value])),
  );
}

/** A length-prefixed value (`S` long string, `x` byte array, `F` table, `A` array). */
function sized(bytes: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

const FRAME_END = 0xce;

function frame(type: number, channel: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(7);
  head.writeUInt8(type, 0);
  head.writeUInt16BE(channel, 1);
  head.writeUInt32BE(payload.length, 3);
  return Buffer.concat([head, payload, Buffer.from([FRAME_END])]);
}

function method(classId: number, methodId: number, args: Buffer): Buffer {
  const ids = Buffer.alloc(4);
  ids.writeUInt16BE(classId, 0);
  ids.writeUInt16BE(methodId, 2);
  return Buffer.concat([ids, args]);
}

function shortstr(text: string): Buffer {
  return Buffer.concat([Buffer.from([Buffer.byteLength(text)]), Buffer.from(text)]);
}

function longstr(bytes: Buffer): Buffer {
  return sized(bytes);
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

/** Reads whole frames off a socket, one at a time. */
class FrameReader {
  private buffered = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  private failure: Error | undefined;

  public constructor(socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.waiting?.();
    });
    socket.on('error', (error) => {
      this.failure = error;
      this.waiting?.();
    });
    socket.on('close', () => {
      this.failure ??= new Error('the broker closed the connection');
      this.waiting?.();
    });
  }

  /** The next method frame's class and method ids (content frames are not expected here). */
  public async nextMethod(): Promise<{ classId: number; methodId: number; args: Buffer }> {
    for (;;) {
      if (this.buffered.length >= 7) {
        const size = this.buffered.readUInt32BE(3);
        if (this.buffered.length >= 8 + size) {
          const payload = this.buffered.subarray(7, 7 + size);
          this.buffered = this.buffered.subarray(8 + size);
          if (this.buffered.length === 0) this.buffered = Buffer.alloc(0);
          return { classId: payload.readUInt16BE(0), methodId: payload.readUInt16BE(2), args: payload.subarray(4) };
        }
      }
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
      this.waiting = undefined;
    }
  }

  public async expect(classId: number, methodId: number): Promise<Buffer> {
    const got = await this.nextMethod();
    if (got.classId !== classId || got.methodId !== methodId) {
      const reason = got.classId === 10 && got.methodId === 50 ? `: ${got.args.subarray(3, 3 + (got.args[2] ?? 0)).toString()}` : '';
      throw new Error(`raw publish: expected method ${classId}.${methodId}, got ${got.classId}.${got.methodId}${reason}`);
    }
    return got.args;
  }
}

/** What {@link rawPublish} sends. */
type RawMessage = {
  /** The queue (published through the default exchange). */
  readonly queue: string;
  readonly body: Buffer;
  readonly headers: readonly RawHeader[];
  readonly messageId?: string;
};

/** Properties flags (most significant bit first): headers, delivery mode, message id. */
const HEADERS_FLAG = 0x2000;
const DELIVERY_MODE_FLAG = 0x1000;
const MESSAGE_ID_FLAG = 0x0080;

/** Publishes one persistent message with exactly these header bytes, and waits for the broker's confirm. */
async function rawPublish(message: RawMessage, url = AMQP_URL): Promise<void> {
  const target = new URL(url);
  const socket = connect({ host: target.hostname, port: Number(target.port || 5672) });
  const reader = new FrameReader(socket);
  try {
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(Buffer.from([0x41, 0x4d, 0x51, 0x50, 0, 0, 9, 1]));
    await reader.expect(10, 10);
    const user = decodeURIComponent(target.username || 'guest');
    const password = decodeURIComponent(target.password || 'guest');
    const response = Buffer.from(`\0${user}\0${password}`);
    socket.write(frame(1, 0, method(10, 11, Buffer.concat([u32(0), shortstr('PLAIN'), longstr(response), shortstr('en_US')]))));
    const tune = await reader.expect(10, 30);
    socket.write(frame(1, 0, method(10, 31, Buffer.concat([u16(tune.readUInt16BE(0)), u32(tune.readUInt32BE(2)), u16(0)]))));
    const vhost = decodeURIComponent(target.pathname.slice(1)) || '/';
    socket.write(frame(1, 0, method(10, 40, Buffer.concat([shortstr(vhost), shortstr(''), Buffer.from([0])]))));
    await reader.expect(10, 41);
    socket.write(frame(1, 1, method(20, 10, shortstr(''))));
    await reader.expect(20, 11);
    socket.write(frame(1, 1, method(85, 10, Buffer.from([0]))));
    await reader.expect(85, 11);
    socket.write(frame(1, 1, method(60, 40, Buffer.concat([u16(0), shortstr(''), shortstr(message.queue), Buffer.from([0])]))));
    const flags = HEADERS_FLAG | DELIVERY_MODE_FLAG | (message.messageId === undefined ? 0 : MESSAGE_ID_FLAG);
    const size = Buffer.alloc(8);
    size.writeBigUInt64BE(BigInt(message.body.length));
    const properties = Buffer.concat([
      sized(rawTable(message.headers)),
      Buffer.from([2]),
      ...(message.messageId === undefined ? [] : [shortstr(message.messageId)]),
    ]);
    socket.write(frame(2, 1, Buffer.concat([u16(60), u16(0), size, u16(flags), properties])));
    const frameMax = tune.readUInt32BE(2) || 131_072;
    for (let at = 0; at < message.body.length; at += frameMax - 8) socket.write(frame(3, 1, message.body.subarray(at, at + frameMax - 8)));
    const confirm = await reader.nextMethod();
    if (confirm.classId !== 60 || confirm.methodId !== 80)
      throw new Error(`raw publish: the broker did not confirm (method ${confirm.classId}.${confirm.methodId})`);
    socket.write(frame(1, 0, method(10, 50, Buffer.concat([u16(200), shortstr('bye'), u16(0), u16(0)]))));
    await reader.expect(10, 51);
  } finally {
    socket.destroy();
  }
}

export { rawPublish, rawTable, sized };
export type { RawHeader };
