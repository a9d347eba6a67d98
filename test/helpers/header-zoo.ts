/**
 * Header tables as other AMQP 0-9-1 clients write them: one header of every type RabbitMQ's field
 * tables carry, with values amqplib would encode otherwise or cannot decode exactly. Sent with
 * `rawPublish`, read back byte for byte with `readRaw`.
 */
import amqp, { type GetMessage } from 'amqplib';
import { AMQP_URL } from './broker.js';
import { tapRawHeaders } from './raw-headers.js';
import { rawTable, sized, type RawHeader } from './raw-publish.js';

function bytes(...values: number[]): Buffer {
  return Buffer.from(values);
}

function int(size: 1 | 2 | 4 | 8, value: number | bigint, signed = true): Buffer {
  const b = Buffer.alloc(size);
  if (size === 8) b.writeBigInt64BE(BigInt(value));
  else if (signed) b.writeIntBE(Number(value), 0, size);
  else b.writeUIntBE(Number(value), 0, size);
  return b;
}

/** An IEEE 754 value of 4 (`float`) or 8 (`double`) bytes. */
function ieee(size: 4 | 8, value: number): Buffer {
  const b = Buffer.alloc(size);
  if (size === 4) b.writeFloatBE(value);
  else b.writeDoubleBE(value);
  return b;
}

/** Every type RabbitMQ's field tables carry, with values amqplib would encode otherwise (or cannot decode exactly). */
const ZOO: readonly RawHeader[] = [
  ['int8', 'b', int(1, 5)],
  ['uint8', 'B', int(1, 200, false)],
  ['int16', 's', int(2, 5)],
  ['uint16', 'u', int(2, 5, false)],
  ['int32', 'I', int(4, 5)],
  ['uint32', 'i', int(4, 5, false)],
  ['int64', 'l', int(8, 2n ** 62n + 1n)],
  ['float', 'f', ieee(4, 1.5)],
  ['double', 'd', ieee(8, 0.1)],
  ['whole-double', 'd', ieee(8, 2)],
  ['int16-300', 's', int(2, 300)],
  ['decimal', 'D', bytes(2, 0, 0, 4, 210)],
  ['timestamp', 'T', int(8, 1_795_334_400n)],
  ['bool', 't', bytes(1)],
  ['void', 'V', Buffer.alloc(0)],
  ['bytes', 'x', sized(bytes(0, 255, 128))],
  ['latin1', 'S', sized(bytes(0x63, 0x61, 0x66, 0xe9))],
  [
    'nested',
    'F',
    sized(
      rawTable([
        ['n', 'I', int(4, 7)],
        ['f', 'f', ieee(4, 2.5)],
      ]),
    ),
  ],
  ['list', 'A', sized(Buffer.concat([Buffer.from('s'), int(2, 3), Buffer.from('l'), int(8, 2n ** 60n)]))],
  ['boomerang-error-name', 'S', sized(Buffer.from('PartnerDown'))],
];

/** Headers over amqplib's 65 536-byte encoding buffer (RabbitMQ takes up to its frame size, 128 KiB). */
const BIG: readonly RawHeader[] = [
  ['boomerang-error-name', 'S', sized(Buffer.from('TooBig'))],
  ['padding', 'S', sized(Buffer.alloc(70_000, 'p'))],
];

const BODY = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

/** Every message of `queue`, in order, each with its raw header bytes (taken off the queue). */
async function readRaw(queue: string): Promise<{ message: GetMessage; raw: ReadonlyMap<string, Buffer> }[]> {
  const connection = await amqp.connect(AMQP_URL, { noDelay: true });
  try {
    const tap = tapRawHeaders(connection);
    const channel = await connection.createChannel();
    const out: { message: GetMessage; raw: ReadonlyMap<string, Buffer> }[] = [];
    for (;;) {
      const message = await channel.get(queue, { noAck: true });
      if (message === false) break;
      out.push({ message, raw: tap.last() });
    }
    return out;
  } finally {
    await connection.close();
  }
}

/** Each raw header as hex (type tag + bytes), by name. */
function published(headers: readonly RawHeader[]): Map<string, string> {
  return new Map(headers.map(([name, tag, value]) => [name, Buffer.concat([Buffer.from(tag, 'latin1'), value]).toString('hex')]));
}

export { BIG, BODY, ieee, int, published, readRaw, ZOO };
