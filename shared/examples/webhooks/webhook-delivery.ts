import { type Env, envInt } from '../../config/env.js';
import { ConfigError, RetryableError, UnrecoverableError } from '../../errors.js';
import type { Handler } from '../../message/message.js';
import { parseRetryAfterMs } from './retry-after.js';
import { toRequest } from './webhook-request.js';

/** Options of {@link createWebhookDelivery}. */
type WebhookDeliveryOptions = {
  /** How long one HTTP request (headers and error body) may take. @default 10000 */
  readonly httpTimeoutMs?: number;
  /** The fetch to call; benchmarks may pass an instrumented one. @default globalThis.fetch */
  readonly fetch?: typeof fetch;
};

const DEFAULT_HTTP_TIMEOUT_MS = 10_000;
// setTimeout (behind AbortSignal.timeout) fires after 1 ms when given more than this.
const MAX_TIMEOUT_MS = 2_147_483_647;
const SNIPPET_CHARS = 200;
// 4xx that blame the timing rather than the request (timeout, too early, rate limited).
const RETRYABLE_4XX = new Set([408, 425, 429]);

/** The first {@link SNIPPET_CHARS} characters of the body, for the error; the rest is cancelled unread. */
async function readSnippet(response: Response): Promise<string> {
  let text = '';
  const decoder = new TextDecoder();
  try {
    for await (const chunk of response.body ?? []) {
      text += decoder.decode(chunk, { stream: true });
      if (text.length > SNIPPET_CHARS) break; // leaving the loop cancels the stream and frees the socket
    }
  } catch {
    // A body cut off mid-way still leaves the status to report.
  }
  text = text.replace(/\s+/g, ' ').trim();
  return text.length > SNIPPET_CHARS ? `${text.slice(0, SNIPPET_CHARS)}…` : text;
}

/**
 * Builds the webhook handler: the message `{ "url", "method"?, "headers"?, "body"? }` is sent once with
 * fetch (method defaults to POST; a non-string body is sent as JSON; `null` means no body).
 * Outcomes: 2xx resolves; 408, 425, 429, 5xx, network errors and timeouts throw `RetryableError`
 * (with `retryAfterMs` from `Retry-After`; a 429 also pauses the queue, `pauseQueue`); any other status and a malformed message throw
 * `UnrecoverableError`. Errors name the method, origin, status and a body snippet, never the headers.
 * @example
 * const handle = createWebhookDelivery({ httpTimeoutMs: 5_000 });
 */
function createWebhookDelivery(options: WebhookDeliveryOptions = {}): Handler {
  const httpTimeoutMs = options.httpTimeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  if (!Number.isInteger(httpTimeoutMs) || httpTimeoutMs < 1 || httpTimeoutMs > MAX_TIMEOUT_MS) {
    throw new ConfigError(`httpTimeoutMs must be an integer from 1 to ${MAX_TIMEOUT_MS}; got ${httpTimeoutMs}`);
  }
  const fetchFn = options.fetch ?? fetch;
  return async (message, context) => {
    const request = toRequest(message);
    // Origin only: paths and queries of webhook URLs often embed secrets (Slack, Discord...).
    const what = `webhook ${request.method} ${new URL(request.url).origin}`;
    const timeout = AbortSignal.timeout(httpTimeoutMs);
    let response: Response;
    try {
      response = await fetchFn(request, { signal: AbortSignal.any([context.signal, timeout]) });
    } catch (error) {
      const reason = context.signal.aborted
        ? 'was aborted: the invocation ran out of time'
        : timeout.aborted
          ? `timed out after ${httpTimeoutMs} ms`
          : `failed: ${((error as Error).cause as Error | undefined)?.message ?? (error as Error).message}`;
      throw new RetryableError(`${what} ${reason}`, { cause: error });
    }
    const { status } = response;
    if (response.ok) {
      // The partner said yes; a body that breaks while we discard it changes nothing.
      await response.body?.cancel().catch(() => undefined);
      return;
    }
    const failure = `${what} answered ${status}: ${await readSnippet(response)}`;
    // Every 5xx, not only 500/502/503/504: a 501 or 505 is a server fault a deploy can fix, and the
    // retry budget still ends in the parking lot if it is not. Only "other 4xx" blames the message.
    if (RETRYABLE_4XX.has(status) || (status >= 500 && status <= 599)) {
      const retryAfterMs = parseRetryAfterMs(response.headers.get('retry-after'), Date.now());
      // A 429 says "slow down": the whole queue waits, not only this message.
      throw new RetryableError(failure, { retryAfterMs, pauseQueue: status === 429 });
    }
    // Other 4xx, and 1xx/3xx that fetch hands back (a 304, a redirect without Location): sending the
    // same request again gets the same answer.
    throw new UnrecoverableError(failure);
  };
}

/**
 * Reads `HTTP_TIMEOUT_MS` (milliseconds, 1 to 2147483647; unset or blank: 10000) from `env`.
 * @throws ConfigError naming the variable and the bad value.
 */
const httpTimeoutMsFromEnv = (env: Env = process.env): number => envInt(env, 'HTTP_TIMEOUT_MS', DEFAULT_HTTP_TIMEOUT_MS, 1, MAX_TIMEOUT_MS);

/** The handler `boomerang invoke --handler shared/examples/webhooks/webhook-delivery.ts` runs, configured once per container from the environment. */
const handle: Handler = createWebhookDelivery({ httpTimeoutMs: httpTimeoutMsFromEnv() });

export { createWebhookDelivery, handle, httpTimeoutMsFromEnv };
