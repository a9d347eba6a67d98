/**
 * How many messages of a native work queue wait for their delay, from RabbitMQ's management HTTP API.
 * A native retry leaves the message in its work queue until its delivery time, where AMQP's count
 * (amqplib's `checkQueue`) and RabbitMQ 4's AMQP 1.0 management do not see it: both count the ready
 * messages only. The HTTP API counts each kind (measured on 4.3.6: `messages` 7 = `messages_ready` 2
 * + `messages_delayed` 4 + `messages_unacknowledged` 1, where `checkQueue` said 2).
 */

import { loginOfUrl } from '../amqp/broker-endpoints.js';
import { OPTIONS } from '../config/option-table.js';
import { redactText } from '../observability/redact.js';
import { formatDuration } from '../topology/retry-timeline.js';

/** A native work queue's messages apart, or why the management API could not say. */
type NativeCounts =
  | {
      readonly kind: 'counted';
      readonly ready: number;
      /** Held by the broker until their delivery time: native retries, and returns after a crash. */
      readonly delayed: number;
      /** Delivered to a consumer and not settled yet: being handled. */
      readonly unacked: number;
      /** When the next delayed one comes due (epoch ms); null when none waits. */
      readonly nextDueAtMs: number | null;
    }
  | { readonly kind: 'unknown'; readonly reason: string };

/** Where a broker's management API answers, and the login it takes (the broker's AMQP user). */
type ManagementApi = { readonly url: string; readonly username: string; readonly password: string };

/** Options of {@link readNativeCounts}; tests pass a fake `fetch`. */
type ReadOptions = {
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** @default {@link MANAGEMENT_TIMEOUT_MS} */
  readonly timeoutMs?: number;
};

/**
 * Long enough for an API across a VPC, short enough that an unreachable one (a security group that
 * drops the packets) holds the overview, which reads it beside the AMQP counts, for 2 s at most.
 */
const MANAGEMENT_TIMEOUT_MS = 2000;

/** RabbitMQ pairs its management listener with AMQP's port: 15672 beside 5672, 15671 (TLS) beside 5671. */
const PORT_OFFSET = 10_000;

/** Amazon MQ's broker host names: its web console, which serves the API, is HTTPS on 443 of the same name. */
const AMAZON_MQ_HOST = /\.mq\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/i;

const COLUMNS = 'messages,messages_ready,messages_delayed,messages_unacknowledged,next_delayed_at';

/**
 * The management API's URL for an AMQP URL: Amazon MQ's web console, else the AMQP port + 10 000, over
 * HTTPS when AMQP is over TLS. Never the credentials. Undefined when there is none to derive.
 * @example managementUrlOf('amqps://app:pw@b-1.mq.eu-west-1.amazonaws.com:5671') // 'https://b-1.mq.eu-west-1.amazonaws.com'
 * @example managementUrlOf('amqp://guest:guest@127.0.0.1:5674') // 'http://127.0.0.1:15674'
 */
function managementUrlOf(amqpUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(amqpUrl);
  } catch {
    return undefined;
  }
  const tls = url.protocol === 'amqps:';
  if (!tls && url.protocol !== 'amqp:') return undefined;
  if (AMAZON_MQ_HOST.test(url.hostname)) return `https://${url.hostname}`;
  const port = (url.port === '' ? (tls ? 5671 : 5672) : Number(url.port)) + PORT_OFFSET;
  return port > 65_535 ? undefined : `${tls ? 'https' : 'http'}://${url.hostname}:${port}`;
}

/**
 * The API to ask for the broker of `amqpUrl`: `configured` (MANAGEMENT_URL, which holds no
 * credentials) or the one derived from it, with the AMQP URL's user and password.
 */
function managementApiOf(amqpUrl: string, configured?: string): ManagementApi | undefined {
  const url = configured ?? managementUrlOf(amqpUrl);
  if (url === undefined) return undefined;
  let login: { readonly username: string; readonly password: string };
  try {
    // The broker's own login, as the AMQP connection uses it (guest/guest when the URL names none).
    login = loginOfUrl(new URL(amqpUrl));
  } catch {
    login = { username: '', password: '' };
  }
  return { url: url.replace(/\/+$/, ''), ...login };
}

/**
 * A queue's counts from the API's JSON. The delayed ones are 4.3's `messages_delayed`; where that is
 * missing, they are what the total holds beyond the ready and the unacked ones.
 */
function nativeCountsOf(json: unknown): NativeCounts {
  const queue = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const count = (key: string): number | undefined => {
    const value = queue[key];
    return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  };
  const [messages, ready, unacked] = [count('messages'), count('messages_ready'), count('messages_unacknowledged')];
  if (messages === undefined || ready === undefined || unacked === undefined) {
    // A new queue has no figures until the API's next sample (every 5 s by default); a broker whose statistics are off has none.
    return { kind: 'unknown', reason: 'the management API has no counts for it (yet: it samples every 5 s; or its statistics are off)' };
  }
  const delayed = count('messages_delayed') ?? Math.max(0, messages - ready - unacked);
  return { kind: 'counted', ready, delayed, unacked, nextDueAtMs: delayed > 0 ? (count('next_delayed_at') ?? null) : null };
}

/** Each of `queues` (of `vhost`) counted apart by `api`, in parallel, each within the time limit; never throws. */
async function readNativeCounts(
  api: ManagementApi | undefined,
  vhost: string,
  queues: readonly string[],
  options: ReadOptions = {},
): Promise<Map<string, NativeCounts>> {
  const counts = await Promise.all(
    queues.map((queue) =>
      api === undefined
        ? ({ kind: 'unknown', reason: "there is no management API address to derive from the broker's" } as const)
        : readOne(api, vhost, queue, options),
    ),
  );
  return new Map(queues.map((queue, i) => [queue, counts[i] as NativeCounts]));
}

async function readOne(api: ManagementApi, vhost: string, queue: string, options: ReadOptions): Promise<NativeCounts> {
  const timeoutMs = options.timeoutMs ?? MANAGEMENT_TIMEOUT_MS;
  const unknown = (why: string): NativeCounts => ({ kind: 'unknown', reason: `${api.url} ${why}` });
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(`${api.url}/api/queues/${encodeURIComponent(vhost)}/${encodeURIComponent(queue)}?columns=${COLUMNS}`, {
      headers: { authorization: `Basic ${Buffer.from(`${api.username}:${api.password}`).toString('base64')}` },
      signal: AbortSignal.timeout(timeoutMs),
      // A redirect could carry the login elsewhere: it is reported, not followed.
      redirect: 'manual',
    });
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') return unknown(`did not answer within ${timeoutMs} ms`);
    const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
    return unknown(`did not answer (${String(cause?.code ?? cause?.message ?? (error as Error).message)})`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    if (response.status === 401) return unknown("refused the broker's login (it lets in users tagged management, monitoring or administrator only)");
    if (response.status === 404) return unknown(`has no queue ${JSON.stringify(queue)} in vhost ${JSON.stringify(vhost)}`);
    return unknown(`answered HTTP ${response.status}${response.status >= 300 && response.status < 400 ? ' (a redirect: not followed)' : ''}`);
  }
  const json: unknown = await response.json().catch(() => undefined);
  return json === undefined ? unknown("answered with something other than the management API's JSON") : nativeCountsOf(json);
}

/**
 * A native work queue's messages apart as the overview shows them: ready (`ready`: AMQP's live count,
 * as for every queue), waiting for their delay and unacked (the API's last sample), and when the next
 * one comes due; or why those are not known, with the option that sets the API's address. Null for a
 * work queue that does not exist (`ready` null).
 */
function nativeCountsView(counts: NativeCounts | undefined, ready: number | null, nowMs: number): Record<string, unknown> | null {
  if (ready === null) return null;
  if (counts === undefined || counts.kind === 'unknown') {
    return { kind: 'unknown', reason: counts?.reason ?? 'not asked', option: OPTIONS.managementUrl.code, variable: OPTIONS.managementUrl.variable };
  }
  const { delayed, unacked, nextDueAtMs } = counts;
  return { kind: 'counted', ready, delayed, unacked, nextDueIn: nextDueAtMs === null ? null : formatDuration(Math.max(0, nextDueAtMs - nowMs)) };
}

/**
 * The native work queues' messages apart, from `broker`; when it cannot tell them (no API, a refused
 * login), why, for each queue, so that the overview shows the rest.
 */
async function nativeCountsOrWhy(
  broker: { nativeCounts(queues: readonly string[]): Promise<ReadonlyMap<string, NativeCounts>> },
  queues: readonly string[],
): Promise<ReadonlyMap<string, NativeCounts>> {
  if (queues.length === 0) return new Map();
  return broker.nativeCounts(queues).catch((error: unknown) => {
    const reason = redactText(`${(error as Error).name}: ${(error as Error).message}`);
    return new Map(queues.map((name) => [name, { kind: 'unknown', reason } as const]));
  });
}

export { managementApiOf, managementUrlOf, nativeCountsOf, nativeCountsOrWhy, nativeCountsView, readNativeCounts };
export type { NativeCounts };
