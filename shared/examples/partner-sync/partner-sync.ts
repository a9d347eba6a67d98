import { RetryableError, UnrecoverableError } from '../../errors.js';
import type { BoomerangMessage, Handler } from '../../message/message.js';
import { parseRetryAfterMs } from '../webhooks/retry-after.js';
import { PartnerConflictError, PartnerRateLimitedError, PartnerUnavailableError } from './partner-errors.js';

/** Options of {@link createPartnerSync}. */
type PartnerSyncOptions = {
  /** The partner API's base URL. @default PARTNER_API_URL, read at each call (so a missing one retries, never parks) */
  readonly baseUrl?: string;
  /** How long one PUT may take. @default 10000 */
  readonly httpTimeoutMs?: number;
  /** The fetch to call. @default globalThis.fetch */
  readonly fetch?: typeof fetch;
};

/** One record to sync: the message body. */
type RecordMessage = { readonly id: string; readonly record: Readonly<Record<string, unknown>> };

const DEFAULT_HTTP_TIMEOUT_MS = 10_000;
const ID = /^[A-Za-z0-9._~-]{1,128}$/;

/** Checks the body against `{ "id": "<record id>", "record": { ... } }`; a bad one can never sync. */
function toRecord(message: BoomerangMessage): RecordMessage {
  let input: unknown;
  try {
    input = JSON.parse(message.body.toString('utf8'));
  } catch {
    throw new UnrecoverableError(`partner-sync message body is not valid JSON (${message.body.length} bytes)`);
  }
  const { id, record } = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  if (typeof id !== 'string' || !ID.test(id))
    throw new UnrecoverableError(`partner-sync message needs "id": 1 to 128 letters, digits, or . _ ~ -; got ${JSON.stringify(id)?.slice(0, 60)}`);
  if (typeof record !== 'object' || record === null || Array.isArray(record))
    throw new UnrecoverableError(`partner-sync message ${id} needs "record": a JSON object`);
  return { id, record: record as Record<string, unknown> };
}

/**
 * Builds the partner-sync handler: the message `{ "id", "record" }` becomes `PUT <baseUrl>/records/<id>`
 * with the record as JSON and `Idempotency-Key: <id>`. 2xx resolves; 409 throws `PartnerConflictError`,
 * 429 `PartnerRateLimitedError` (with Retry-After), 5xx and network failures `PartnerUnavailableError`;
 * other statuses and a malformed message throw `UnrecoverableError` (parked at once). The retry rules
 * of the queue decide what each retryable error gets.
 * @example
 * const handle = createPartnerSync({ baseUrl: 'https://partner.example/api' });
 */
function createPartnerSync(options: PartnerSyncOptions = {}): Handler {
  const httpTimeoutMs = options.httpTimeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  if (!Number.isInteger(httpTimeoutMs) || httpTimeoutMs < 1) throw new RangeError(`httpTimeoutMs must be a positive integer; got ${httpTimeoutMs}`);
  const fetchFn = options.fetch ?? fetch;
  return async (message, context) => {
    const { id, record } = toRecord(message);
    const baseUrl = options.baseUrl ?? process.env.PARTNER_API_URL?.trim();
    // A deploy mistake, not the message's fault: retried until the variable is set, then delivered.
    if (!baseUrl) throw new RetryableError('PARTNER_API_URL is not set: set it to the partner API base URL (https://...) in the function environment');
    const url = `${baseUrl.replace(/\/+$/, '')}/records/${encodeURIComponent(id)}`;
    const what = `partner PUT ${new URL(url).origin}/records/${id}`;
    const timeout = AbortSignal.timeout(httpTimeoutMs);
    let response: Response;
    try {
      response = await fetchFn(url, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'idempotency-key': id },
        body: JSON.stringify(record),
        signal: AbortSignal.any([context.signal, timeout]),
      });
    } catch (error) {
      const reason = context.signal.aborted
        ? 'was aborted: the invocation ran out of time'
        : timeout.aborted
          ? `timed out after ${httpTimeoutMs} ms`
          : `failed: ${(error as Error).message}`;
      throw new PartnerUnavailableError(`${what} ${reason}`, { cause: error });
    }
    await response.body?.cancel().catch(() => undefined);
    const { status } = response;
    if (response.ok) return;
    const failure = `${what} answered ${status}`;
    const retryAfterMs = parseRetryAfterMs(response.headers.get('retry-after'), Date.now());
    if (status === 409) throw new PartnerConflictError(failure);
    if (status === 429) throw new PartnerRateLimitedError(failure, { retryAfterMs });
    if (status >= 500 && status <= 599) throw new PartnerUnavailableError(failure, { retryAfterMs });
    throw new UnrecoverableError(failure);
  };
}

export { createPartnerSync };
