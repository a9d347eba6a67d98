import type { MessageFields, MessageProperties, Options } from 'amqplib';
import { BoomerangHeader, STRIPPED_HEADERS } from './headers.js';
import { withFailure } from './failure-history.js';
import { cutUtf8 } from './utf8.js';

/** The parts of a delivery a copy is built from (amqplib's `ConsumeMessage` fits). */
type Delivery = {
  readonly content: Buffer;
  readonly fields: Pick<MessageFields, 'exchange' | 'routingKey'>;
  readonly properties: MessageProperties;
};

type CopyInput = {
  readonly retryHeader: string;
  /** The count the copy carries. */
  readonly retryNo: number;
  readonly now: Date;
  /** The failed attempt the copy follows, added to its failure history; none for a copy of an untried message (deferred). */
  readonly failure?: { readonly name: string; readonly message: string };
};

type ParkInput = CopyInput & {
  readonly reason: string;
  readonly errorName: string;
  readonly errorMessage: string;
  readonly errorStack: string | undefined;
  /** The JSON of the thrown value's other fields (retry/error-fields.ts), already bounded. @default none */
  readonly errorFields?: string;
  readonly sourceQueue: string;
  readonly functionName: string;
  /** Drop the team's own headers (they did not fit in a frame); keep Boomerang's. */
  readonly withoutUserHeaders?: boolean;
};

type Copy = { readonly content: Buffer; readonly options: Options.Publish };

const ERROR_MESSAGE_MAX_BYTES = 1024;
const ERROR_STACK_MAX_BYTES = 4096;

/**
 * A copy for the delay path: same body and properties, persistent, `retryHeader` = retryNo, and
 * never `expiration` (a per-message TTL blocks the head of a queue and would expire the copy) nor
 * the broker's `x-death` family, `CC`/`BCC` (they would route the copy elsewhere) or `userId`
 * (the broker rejects a user id other than the publishing connection's).
 */
function buildRetryCopy(delivery: Delivery, input: CopyInput): Copy {
  const headers = copyHeaders(delivery, false);
  const now = isoTime(input.now);
  headers[input.retryHeader] = input.retryNo;
  headers[BoomerangHeader.firstFailureAt] ??= now;
  headers[BoomerangHeader.lastFailureAt] = now;
  if (input.failure !== undefined)
    headers[BoomerangHeader.failureHistory] = withFailure(headers[BoomerangHeader.failureHistory], { at: now, ...input.failure });
  return { content: delivery.content, options: copyProperties(delivery.properties, headers) };
}

/** A copy for the parking lot: the retry copy's fields plus why and where it failed. */
function buildParkedCopy(delivery: Delivery, input: ParkInput): Copy {
  const headers = copyHeaders(delivery, input.withoutUserHeaders ?? false);
  const now = isoTime(input.now);
  headers[input.retryHeader] = input.retryNo;
  headers[BoomerangHeader.firstFailureAt] ??= now;
  headers[BoomerangHeader.lastFailureAt] = now;
  headers[BoomerangHeader.parkedAt] = now;
  headers[BoomerangHeader.parkReason] = input.reason;
  headers[BoomerangHeader.failureHistory] = withFailure(headers[BoomerangHeader.failureHistory], {
    at: now,
    name: input.errorName,
    message: input.errorMessage,
  });
  headers[BoomerangHeader.errorName] = input.errorName;
  headers[BoomerangHeader.errorMessage] = cutUtf8(input.errorMessage, ERROR_MESSAGE_MAX_BYTES);
  if (input.errorStack) headers[BoomerangHeader.errorStack] = cutUtf8(input.errorStack, ERROR_STACK_MAX_BYTES);
  if (input.errorFields !== undefined) headers[BoomerangHeader.errorFields] = input.errorFields;
  // Attempts made = retries before this one + this one.
  headers[BoomerangHeader.attempts] = input.retryNo + 1;
  headers[BoomerangHeader.sourceQueue] = input.sourceQueue;
  headers[BoomerangHeader.functionName] = input.functionName;
  return { content: delivery.content, options: copyProperties(delivery.properties, headers) };
}

/** The last time formatted: a burst of retries shares its millisecond, and toISOString costs 0.5 µs. */
let lastIso = { ms: Number.NaN, text: '' };

function isoTime(date: Date): string {
  const ms = date.getTime();
  if (ms !== lastIso.ms) lastIso = { ms, text: date.toISOString() };
  return lastIso.text;
}

function copyHeaders(delivery: Delivery, withoutUserHeaders: boolean): Record<string, unknown> {
  const headers: Record<string, unknown> = {};
  const original = delivery.properties.headers;
  // for-in, not Object.entries: this runs for every retry, and the pairs array is pure garbage.
  for (const key in original) {
    if (!Object.hasOwn(original, key) || STRIPPED_HEADERS.has(key) || key === BoomerangHeader.copyId) continue;
    if (withoutUserHeaders && !key.startsWith('boomerang-')) continue;
    headers[key] = original[key];
  }
  // The copy travels via the delay path; keep where it was first published (rules and tools read it).
  headers[BoomerangHeader.originalExchange] ??= delivery.fields.exchange;
  headers[BoomerangHeader.originalRoutingKey] ??= delivery.fields.routingKey;
  return headers;
}

function copyProperties(p: MessageProperties, headers: Record<string, unknown>): Options.Publish {
  const options: Options.Publish = { headers, persistent: true };
  // Only set what the original had: amqplib encodes `undefined` fields as absent, but keep it explicit.
  if (p.messageId !== undefined) options.messageId = p.messageId;
  if (p.correlationId !== undefined) options.correlationId = p.correlationId;
  if (p.contentType !== undefined) options.contentType = p.contentType;
  if (p.contentEncoding !== undefined) options.contentEncoding = p.contentEncoding;
  if (p.type !== undefined) options.type = p.type;
  if (p.appId !== undefined) options.appId = p.appId;
  if (p.timestamp !== undefined) options.timestamp = p.timestamp;
  if (p.priority !== undefined) options.priority = p.priority;
  if (p.replyTo !== undefined) options.replyTo = p.replyTo;
  return options;
}

/** The routing key a message was first published with: from our header once it has been retried. */
function originalRoutingKey(delivery: Delivery): string {
  const kept = delivery.properties.headers?.[BoomerangHeader.originalRoutingKey];
  return typeof kept === 'string' ? kept : delivery.fields.routingKey;
}

/** The exchange a message was first published to. */
function originalExchange(delivery: Delivery): string {
  const kept = delivery.properties.headers?.[BoomerangHeader.originalExchange];
  return typeof kept === 'string' ? kept : delivery.fields.exchange;
}

export { buildParkedCopy, buildRetryCopy, cutUtf8, isoTime, originalExchange, originalRoutingKey };
export type { Copy, Delivery, ParkInput };
