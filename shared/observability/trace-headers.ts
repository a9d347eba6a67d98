/**
 * Reading a message's trace context from its AMQP headers, for the tracers (pure). Another client may
 * have sent a header as a long string or as a byte array: amqplib hands the first over as a string
 * and the second as a Buffer, and the event mode's decoding does the same (event/decode-headers.ts).
 */

/** A header's text: a string as it is, bytes as UTF-8; anything else (a number, a table) has none. */
function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8');
  return undefined;
}

/** The parent of an attempt in X-Ray terms: the trace, the segment or span it continues, and whether the trace is sampled. */
type XrayParent = {
  /** `1-xxxxxxxx-yyyyyyyyyyyyyyyyyyyyyyyy`. */
  readonly traceId: string;
  /** 16 hex digits: the producer's segment (X-Ray) or span (W3C). */
  readonly parentId: string | undefined;
  /** False when the producer said not to sample (`Sampled=0`, or a traceparent's flags without 01). */
  readonly sampled: boolean;
};

/** The headers X-Ray's own services and SDKs carry the trace in (SQS names it `AWSTraceHeader`). */
const XRAY_HEADERS = ['X-Amzn-Trace-Id', 'x-amzn-trace-id', 'AWSTraceHeader'] as const;

const XRAY_ROOT = /^1-[0-9a-f]{8}-[0-9a-f]{24}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})/;
const INVALID_TRACE_ID = '0'.repeat(32);
const INVALID_SPAN_ID = '0'.repeat(16);

/**
 * The X-Ray parent of a message: its `X-Amzn-Trace-Id` (or `AWSTraceHeader`) header, else its W3C
 * `traceparent`, whose 32-digit trace id X-Ray takes split as `1-<first 8>-<last 24>` (X-Ray does not
 * check the first part for a time). Undefined when it carries neither, or only malformed ones.
 * @example xrayParentOf({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' })
 * // { traceId: '1-4bf92f35-77b34da6a3ce929d0e0e4736', parentId: '00f067aa0ba902b7', sampled: true }
 */
function xrayParentOf(headers: Readonly<Record<string, unknown>> | undefined): XrayParent | undefined {
  if (headers === undefined) return undefined;
  for (const name of XRAY_HEADERS) {
    const parent = fromXrayHeader(headerText(headers[name]));
    if (parent !== undefined) return parent;
  }
  return fromTraceparent(headerText(headers.traceparent));
}

/** `Root=1-...;Parent=...;Sampled=1` (the fields in any order, spaces allowed). */
function fromXrayHeader(text: string | undefined): XrayParent | undefined {
  if (text === undefined) return undefined;
  const fields = new Map<string, string>();
  for (const part of text.split(';')) {
    const at = part.indexOf('=');
    if (at > 0) fields.set(part.slice(0, at).trim().toLowerCase(), part.slice(at + 1).trim());
  }
  const root = fields.get('root')?.toLowerCase();
  if (root === undefined || !XRAY_ROOT.test(root)) return undefined;
  const parent = fields.get('parent')?.toLowerCase();
  return { traceId: root, parentId: parent !== undefined && SPAN_ID.test(parent) ? parent : undefined, sampled: fields.get('sampled') !== '0' };
}

/** W3C trace context: `00-<trace id>-<parent id>-<flags>`; version ff and all-zero ids are invalid. */
function fromTraceparent(text: string | undefined): XrayParent | undefined {
  const match = TRACEPARENT.exec(text?.trim().toLowerCase() ?? '');
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags] = match as unknown as [string, string, string, string, string];
  if (version === 'ff' || traceId === INVALID_TRACE_ID || spanId === INVALID_SPAN_ID) return undefined;
  return { traceId: `1-${traceId.slice(0, 8)}-${traceId.slice(8)}`, parentId: spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

export { headerText, xrayParentOf };
