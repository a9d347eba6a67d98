import type { ConsumeMessage, MessageProperties } from 'amqplib';
import { decodeHeaders, isTable } from './decode-headers.js';
import { parseJavaDate } from './java-date.js';

/** One event message, decoded into the delivery shape the engine works with. */
type DecodedMessage = {
  /**
   * What amqplib would have delivered. The event carries no exchange, routing key nor delivery tag:
   * `exchange` is '' and `routingKey` the queue (a retried copy still keeps its first exchange and
   * routing key in Boomerang's headers), `deliveryTag` is 0.
   */
  readonly delivery: ConsumeMessage;
  /** Set when the body cannot be decoded: the message is parked with this reason, the handler never sees it. */
  readonly problem: string | undefined;
  /** Properties that were present but unusable and were dropped; for a warning. */
  readonly notes: readonly string[];
};

// Standard base64 with its padding, as the event source writes it.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const STRING_PROPERTIES = [
  'contentType',
  'contentEncoding',
  'correlationId',
  'replyTo',
  'expiration',
  'messageId',
  'type',
  'userId',
  'appId',
  'clusterId',
] as const;

/**
 * Decodes one message of an `aws:rmq` event; never throws. A body that is missing or not base64
 * becomes a `problem`, and the body is then the raw text (or the record as JSON), so that the parked
 * copy keeps whatever arrived. Unusable properties are dropped with a note.
 * @example decodeMessage({ data: 'e30=', basicProperties: null, redelivered: false }, 'orders').delivery.content // <Buffer 7b 7d>
 */
function decodeMessage(raw: unknown, queue: string): DecodedMessage {
  const notes: string[] = [];
  const record = isTable(raw) ? raw : {};
  const { content, problem } = isTable(raw)
    ? decodeBody(raw.data)
    : { content: Buffer.from(safeJson(raw)), problem: `the record is not an object (${describe(raw)})` };
  const properties = decodeProperties(record.basicProperties, notes);
  const bodySize = isTable(record.basicProperties) ? record.basicProperties.bodySize : undefined;
  if (problem === undefined && typeof bodySize === 'number' && bodySize !== content.length) {
    notes.push(`bodySize says ${bodySize} bytes but data holds ${content.length}`);
  }
  return {
    delivery: {
      content,
      fields: { deliveryTag: 0, redelivered: record.redelivered === true, exchange: '', routingKey: queue, consumerTag: '' },
      properties,
    },
    problem,
    notes,
  };
}

function decodeBody(data: unknown): { content: Buffer; problem: string | undefined } {
  if (typeof data !== 'string') return { content: Buffer.alloc(0), problem: `data (the body) is ${describe(data)}, not a base64 string` };
  if (!BASE64.test(data))
    return { content: Buffer.from(data, 'utf8'), problem: 'data (the body) is not valid base64; the parked body is the text as received' };
  return { content: Buffer.from(data, 'base64'), problem: undefined };
}

function decodeProperties(raw: unknown, notes: string[]): MessageProperties {
  const p = isTable(raw) ? raw : {};
  if (!isTable(raw) && raw !== null && raw !== undefined) notes.push(`basicProperties is ${describe(raw)}; ignored`);
  const properties = { headers: decodeHeaders(p.headers, notes) } as MessageProperties;
  for (const name of STRING_PROPERTIES) properties[name] = optional(p, name, notes, (v) => (typeof v === 'string' ? v : undefined));
  properties.deliveryMode = optional(p, 'deliveryMode', notes, (v) => (v === 1 || v === 2 ? v : undefined));
  properties.priority = optional(p, 'priority', notes, (v) => (Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 255 ? v : undefined));
  properties.timestamp = optional(p, 'timestamp', notes, (v) => (typeof v === 'string' ? parseJavaDate(v) : undefined));
  return properties;
}

/** The property's value through `read`; null/missing → undefined, unusable → undefined with a note. */
function optional(p: Readonly<Record<string, unknown>>, name: string, notes: string[], read: (value: unknown) => unknown): unknown {
  const value = p[name];
  if (value === null || value === undefined) return undefined;
  const parsed = read(value);
  if (parsed === undefined) notes.push(`${name} ${JSON.stringify(value)?.slice(0, 60)} is unusable; dropped`);
  return parsed;
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

export { decodeMessage };
export type { DecodedMessage };
