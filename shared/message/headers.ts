/**
 * Header names Boomerang reads and writes, and the one helper that reads the retry count.
 * The count lives only in the message: no store, no `x-death` (RabbitMQ 3.13+/4.x do not carry a
 * client-published `x-death` through re-publishes, so it cannot count them).
 */
import { ConfigError } from '../errors.js';

/** Default name of the retry-count header (`RETRY_HEADER` overrides it). */
const DEFAULT_RETRY_HEADER = 'x-retry-no';

/** Bookkeeping headers on retried and parked copies. Non-`x-` names: `x-` headers belong to the broker. */
const BoomerangHeader = {
  /** ISO time of the first failed attempt; set on the first retry, kept after. */
  firstFailureAt: 'boomerang-first-failure-at',
  lastFailureAt: 'boomerang-last-failure-at',
  /** Where the message was first published: a retried copy arrives via the delay path instead. */
  originalExchange: 'boomerang-original-exchange',
  originalRoutingKey: 'boomerang-original-routing-key',
  /** Unique per published copy: pairs a `basic.return` with its publish. */
  copyId: 'boomerang-copy-id',
  errorName: 'boomerang-error-name',
  errorMessage: 'boomerang-error-message',
  errorStack: 'boomerang-error-stack',
  /** The JSON of the thrown value's other fields (`{ status, detail }`, a `cause`), bounded and redacted. */
  errorFields: 'boomerang-error-fields',
  /** One line per failed attempt, `<time> <error name>: <message>`, the last 10 (failure-history.ts). */
  failureHistory: 'boomerang-failure-history',
  attempts: 'boomerang-attempts',
  parkReason: 'boomerang-park-reason',
  parkedAt: 'boomerang-parked-at',
  sourceQueue: 'boomerang-source-queue',
  functionName: 'boomerang-function',
  /** On a park note (park-note.ts): the SHA-256 of the body of the message the broker parked, which the note stands beside. */
  noteOfBodySha256: 'boomerang-note-of-body-sha256',
} as const;

/**
 * Counts a quorum queue adds to a delivery it hands out again. Measured on 3.10.8 and 4.3.6 (quorum
 * queue, the header absent until the first return):
 *
 * | how the previous delivery ended       | 3.10.8 `x-delivery-count` | 4.3.6 `x-delivery-count` | 4.3.6 `x-acquired-count` |
 * |---------------------------------------|---------------------------|--------------------------|--------------------------|
 * | consumer crash / connection closed    | + 1                       | + 1                      | + 1                      |
 * | `basic.reject`, requeue               | + 1                       | + 1                      | + 1                      |
 * | `basic.nack`, requeue                 | + 1                       | + 0                      | + 1                      |
 *
 * 4.0-4.2 count a requeueing nack too (release notes). Classic queues set neither header.
 */
const BrokerHeader = {
  /** Returns the broker counted: what its delivery limit (20 by default on 4.x) is checked against. */
  deliveryCount: 'x-delivery-count',
  /** 4.3+: every time the message was handed to a consumer before this delivery. */
  acquiredCount: 'x-acquired-count',
} as const;

/** The highest `x-delivery-count` a 4.x quorum queue with the default delivery limit (20) still hands out. */
const LAST_DELIVERY_COUNT = 20;

/**
 * Headers the broker owns or that would change routing: never copied onto a re-published message.
 * `CC`/`BCC` would send the copy to other queues; `x-death` & co. would be re-interpreted by 3.12
 * and 3.13.3+ and grow with every retry.
 */
const STRIPPED_HEADERS: ReadonlySet<string> = new Set([
  'x-death',
  'x-first-death-queue',
  'x-first-death-reason',
  'x-first-death-exchange',
  'x-last-death-queue',
  'x-last-death-reason',
  'x-last-death-exchange',
  'x-delivery-count',
  'x-acquired-count',
  'CC',
  'BCC',
]);

/** AMQP table keys are short strings. */
const MAX_HEADER_NAME_BYTES = 255;

/**
 * Throws a `ConfigError` unless `name` can carry the retry count: not in the broker's `x-` namespace
 * (only the default `x-retry-no` is kept there, for the messages already carrying it), not one of
 * Boomerang's own headers, not `CC`/`BCC`, and at most 255 bytes.
 * @param variable names the source in the error, e.g. `RETRY_HEADER`.
 */
function assertRetryHeaderName(name: string, variable: string): void {
  const brokers = name.toLowerCase().startsWith('x-') && name !== DEFAULT_RETRY_HEADER;
  const taken = (Object.values(BoomerangHeader) as string[]).includes(name) || STRIPPED_HEADERS.has(name);
  if (brokers || taken || Buffer.byteLength(name) > MAX_HEADER_NAME_BYTES) {
    const why = brokers
      ? 'not start with "x-": the broker owns that namespace and may reset such a header, so a message could retry forever'
      : taken
        ? 'not be a header Boomerang or the broker already uses'
        : `be at most ${MAX_HEADER_NAME_BYTES} bytes`;
    throw new ConfigError(`${variable} must ${why}; got ${JSON.stringify(name.slice(0, 60))}. Use a name of your own, e.g. "retry-no"`);
  }
}

/** Above this a count is not a count but a bug or an attack; treated as malformed. */
const MAX_SANE_RETRY_NO = 1_000_000;

type RetryNoReading = {
  /** The count to use: 0 when missing or malformed. */
  readonly retryNo: number;
  /** Set when the header was present but unusable; say it in a warning log. */
  readonly warning?: string;
};

/**
 * Reads the retry count from a message's headers. Missing → 0. A whole number or a string of digits
 * is fine; anything else ("abc", -1, 1.5, 1e12, a table) → 0 with a warning, never a throw.
 */
function readRetryNo(headers: Readonly<Record<string, unknown>> | undefined, headerName: string): RetryNoReading {
  const raw = headers?.[headerName];
  if (raw === undefined || raw === null) return { retryNo: 0 };
  const parsed = toCount(raw);
  if (parsed !== undefined) return { retryNo: parsed };
  return { retryNo: 0, warning: `header ${headerName} is malformed (${describe(raw)}); counted as 0 retries` };
}

function toCount(raw: unknown): number | undefined {
  let value: number | undefined;
  if (typeof raw === 'number') value = raw;
  else if (typeof raw === 'bigint') value = raw <= BigInt(MAX_SANE_RETRY_NO) ? Number(raw) : undefined;
  else if (typeof raw === 'string' || Buffer.isBuffer(raw)) {
    const text = raw.toString().trim();
    value = /^\d{1,7}$/.test(text) ? Number(text) : undefined;
  }
  if (value === undefined || !Number.isInteger(value) || value < 0 || value > MAX_SANE_RETRY_NO) return undefined;
  return value;
}

function describe(raw: unknown): string {
  if (Buffer.isBuffer(raw)) return `bytes ${JSON.stringify(raw.toString().slice(0, 40))}`;
  if (typeof raw === 'string') return `string ${JSON.stringify(raw.slice(0, 40))}`;
  if (typeof raw === 'number' || typeof raw === 'bigint') return `number ${String(raw)}`;
  return Array.isArray(raw) ? 'an array' : `a ${typeof raw}`;
}

/** A count header the broker set: a whole number from 0 to `MAX_SANE_RETRY_NO`, else undefined. */
function readBrokerCount(headers: Readonly<Record<string, unknown>> | undefined, headerName: string): number | undefined {
  const raw = headers?.[headerName];
  return raw === undefined || raw === null ? undefined : toCount(raw);
}

export { assertRetryHeaderName, BoomerangHeader, BrokerHeader, LAST_DELIVERY_COUNT, readBrokerCount, readRetryNo, STRIPPED_HEADERS };
