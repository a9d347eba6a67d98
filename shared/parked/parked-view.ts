import type { Message } from 'amqplib';
import { BoomerangHeader } from '../headers.js';

/** What the parking-lot commands read of one parked message (pure, from its headers). */
type ParkedView = {
  readonly messageId: string | undefined;
  /** When it was parked: Boomerang's header, else the broker's dead-letter time (safety net). */
  readonly parkedAt: Date | undefined;
  /** Attempts made (retries + the last one), when Boomerang parked it. */
  readonly attempts: number | undefined;
  /** The handler's error name; for a message the broker dead-lettered, the reason in brackets. */
  readonly errorName: string | undefined;
  readonly errorMessage: string | undefined;
  readonly parkReason: string | undefined;
  /** The queue it failed on: where `replay` sends it back. */
  readonly sourceQueue: string | undefined;
  /** The routing key it was first published with. */
  readonly routingKey: string;
  readonly headers: Readonly<Record<string, unknown>>;
  readonly body: Buffer;
};

/** A parked message as amqplib delivers it (a consumed or fetched message fits). */
type Parked = Pick<Message, 'content' | 'fields' | 'properties'>;

/** Reads a parked message: Boomerang's `boomerang-*` headers, or the broker's `x-death` for a message it dead-lettered. */
function toParkedView(message: Parked): ParkedView {
  const headers: Record<string, unknown> = message.properties.headers ?? {};
  const death = firstDeath(headers);
  const deathReason = text(headers['x-first-death-reason']) ?? text(death?.reason);
  return {
    messageId: text(message.properties.messageId),
    parkedAt: isoDate(headers[BoomerangHeader.parkedAt]) ?? amqpTime(death?.time),
    attempts: count(headers[BoomerangHeader.attempts]),
    errorName: text(headers[BoomerangHeader.errorName]) ?? (deathReason === undefined ? undefined : `(${deathReason})`),
    errorMessage: text(headers[BoomerangHeader.errorMessage]),
    parkReason: text(headers[BoomerangHeader.parkReason]),
    sourceQueue: text(headers[BoomerangHeader.sourceQueue]) ?? text(headers['x-first-death-queue']) ?? text(death?.queue),
    routingKey: text(headers[BoomerangHeader.originalRoutingKey]) ?? message.fields.routingKey,
    headers,
    body: message.content,
  };
}

/** Text of a header value (amqplib gives strings, or Buffers for byte arrays); undefined otherwise. */
function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return Buffer.isBuffer(value) ? value.toString('utf8') : undefined;
}

function count(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  return typeof value === 'bigint' ? Number(value) : undefined;
}

function isoDate(value: unknown): Date | undefined {
  const raw = text(value);
  const ms = raw === undefined ? Number.NaN : Date.parse(raw);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

/** An AMQP timestamp (seconds), as amqplib decodes it inside a table: `{ '!': 'timestamp', value }`. */
function amqpTime(value: unknown): Date | undefined {
  const seconds = typeof value === 'object' && value !== null ? (value as { value?: unknown }).value : value;
  return typeof seconds === 'number' ? new Date(seconds * 1000) : undefined;
}

function firstDeath(headers: Record<string, unknown>): Record<string, unknown> | undefined {
  const deaths = headers['x-death'];
  const first: unknown = Array.isArray(deaths) ? deaths[0] : undefined;
  return typeof first === 'object' && first !== null ? (first as Record<string, unknown>) : undefined;
}

export { toParkedView };
export type { Parked, ParkedView };
