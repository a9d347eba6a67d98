import type { Message } from 'amqplib';
import { BoomerangHeader } from '../message/headers.js';
import { type BoomerangField, parkField } from './park-fields.js';

/** What the parking-lot commands read of one parked message (pure, from its headers). */
type ParkedView = {
  readonly messageId: string | undefined;
  /** When it was parked: Boomerang's header, else the broker's dead-letter time (safety net). */
  readonly parkedAt: Date | undefined;
  /** Attempts made (retries + the last one), when Boomerang parked it (as a copy or natively). */
  readonly attempts: number | undefined;
  /** The handler's error name; for a message the broker dead-lettered without Boomerang, the reason in brackets. */
  readonly errorName: string | undefined;
  readonly errorMessage: string | undefined;
  /** The JSON of the thrown value's other fields (`{"status":503}`), when it had any. */
  readonly errorFields: string | undefined;
  /** Why it was parked: Boomerang's header, else the broker's last dead-lettering in words. */
  readonly parkReason: string | undefined;
  /** The queue it failed on last, as its headers say (Boomerang's header first; shown by `list` and `show`). */
  readonly sourceQueue: string | undefined;
  /** The queue the broker's own record (`x-last-death-queue`, `x-death`) says it was dead-lettered from; a producer cannot forge it on a dead-lettered message. */
  readonly brokerSourceQueue: string | undefined;
  /**
   * The routing key it was first published with: Boomerang's header on a copy, else the broker's
   * record of the dead-lettering (a native park, or one the broker made), never the parking lot's own key.
   */
  readonly routingKey: string;
  readonly headers: Readonly<Record<string, unknown>>;
  /**
   * The headers of its park note when its failure fields came from one: the broker parked it, and no
   * Boomerang header could go with it (park-notes.ts). Undefined otherwise.
   */
  readonly parkNote?: Readonly<Record<string, unknown>>;
  readonly body: Buffer;
};

/** A parked message as amqplib delivers it (a consumed or fetched message fits). */
type Parked = Pick<Message, 'content' | 'fields' | 'properties'>;

/**
 * Reads a parked message: Boomerang's fields when Boomerang parked it (`boomerang-*` headers on a
 * parked copy, `x-opt-boomerang-*` annotations on a native park: see `parkField`), else the broker's
 * record of its last dead-lettering (the work queue's safety net). The source queue comes from that
 * record whenever Boomerang did not write one, as on every native park. With `note` (its park note,
 * park-notes.ts), a field the message lacks is read from the note.
 */
function toParkedView(message: Parked, note?: Parked): ParkedView {
  const headers: Record<string, unknown> = message.properties.headers ?? {};
  const noteHeaders = note?.properties.headers;
  const field = (name: BoomerangField): unknown => parkField(headers, name) ?? (noteHeaders === undefined ? undefined : parkField(noteHeaders, name));
  const death = lastDeath(headers);
  return {
    messageId: text(message.properties.messageId),
    parkedAt: isoDate(field('parkedAt')) ?? death.time,
    attempts: count(field('attempts')),
    errorName: text(field('errorName')) ?? (death.reason === undefined ? undefined : `(${death.reason})`),
    errorMessage: text(field('errorMessage')),
    errorFields: text(field('errorFields')),
    parkReason: text(field('parkReason')) ?? deathInWords(death),
    sourceQueue: text(field('sourceQueue')) ?? death.queue,
    brokerSourceQueue: death.queue,
    routingKey: text(headers[BoomerangHeader.originalRoutingKey]) ?? death.routingKey ?? message.fields.routingKey,
    headers,
    parkNote: noteHeaders,
    body: message.content,
  };
}

/**
 * Whether a parked message may have a park note: the broker rejected it into the lot (its last
 * death is `rejected`), and it carries no failure of Boomerang's. Only such a message is looked up,
 * so a lot of copies never reads the notes queue.
 */
function mayHaveParkNote(message: Parked): boolean {
  const headers: Record<string, unknown> = message.properties.headers ?? {};
  return parkField(headers, 'errorName') === undefined && lastDeath(headers).reason === 'rejected';
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

/** The broker's most recent dead-lettering of a message. */
type Death = { readonly queue?: string; readonly reason?: string; readonly time?: Date; readonly routingKey?: string };

/**
 * The most recent death: `x-last-death-*` (3.13+), else `x-death[0]` (newest first on every
 * version). `x-first-death-*` never changes, so for a message that expired out of a delay queue and
 * was then rejected from its work queue it names the delay queue: only a last resort here.
 */
function lastDeath(headers: Record<string, unknown>): Death {
  const deaths = headers['x-death'];
  const newest: unknown = Array.isArray(deaths) ? deaths[0] : undefined;
  const entry = typeof newest === 'object' && newest !== null ? (newest as Record<string, unknown>) : {};
  return {
    queue: text(headers['x-last-death-queue']) ?? text(entry.queue) ?? text(headers['x-first-death-queue']),
    reason: text(headers['x-last-death-reason']) ?? text(entry.reason) ?? text(headers['x-first-death-reason']),
    time: amqpTime(entry.time),
    // The routing keys the message had before this dead-lettering: the one it was published with.
    routingKey: Array.isArray(entry['routing-keys']) ? text(entry['routing-keys'][0]) : undefined,
  };
}

function deathInWords(death: Death): string | undefined {
  if (death.reason === undefined) return undefined;
  return `dead-lettered by the broker from ${death.queue ?? 'an unknown queue'} (${death.reason})`;
}

export { mayHaveParkNote, toParkedView };
export type { Parked, ParkedView };
