import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../errors.js';

/** Options of {@link startFlakyProvider}. Rates are fractions of all requests; their sum must stay <= 1. */
type FlakyProviderOptions = {
  /** Fraction answered with a transient failure (429, 500, 502, 503 or 504). @default 0.3 */
  readonly failureRate?: number;
  /** When set, 429 and 503 answers carry `Retry-After` with this many seconds. @default undefined */
  readonly retryAfterSeconds?: number;
  /** Fraction answered 400 (a failure no retry can fix). @default 0 */
  readonly permanentFailureRate?: number;
  /**
   * The partner's rate limit: at most this many requests are answered in each second (a fixed window);
   * the rest get 429 with `Retry-After` (the seconds to the next window), as a real partner's limit
   * does. With a limit, a random transient failure is never a 429: a 429 means "too fast". @default none
   */
  readonly rateLimitPerSecond?: number;
  /** Delay before each answer. @default 0 */
  readonly latencyMs?: number;
  /** The random draws; tests pass a seeded one so that a run can be repeated. @default Math.random */
  readonly random?: () => number;
  /** Start in down mode: every request gets 503. @default false */
  readonly down?: boolean;
  /** Port on 127.0.0.1. @default 0 (an ephemeral port) */
  readonly port?: number;
};

/** What the provider has answered so far. */
type FlakyProviderStats = {
  readonly requests: number;
  /** Requests answered 2xx. */
  readonly succeeded: number;
  /** Requests answered anything else. */
  readonly failed: number;
  readonly byStatus: Readonly<Record<number, number>>;
  /** How many different `x-demo-id` values got a 2xx at least once (duplicates are the difference). */
  readonly distinctIdsSucceeded: number;
};

/** A running provider; see {@link startFlakyProvider}. */
type FlakyProvider = {
  /** Base URL, such as `http://127.0.0.1:41234`; any path and method is accepted. */
  readonly url: string;
  stats(): FlakyProviderStats;
  /** In down mode every request gets 503 (a partner outage, for circuit-breaker tests). */
  setDown(down: boolean): void;
  setFailureRate(rate: number): void;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
};

const TRANSIENT_STATUSES = [429, 500, 502, 503, 504] as const;
const SERVER_FAILURES = [500, 502, 503, 504] as const;

function checkRate(name: string, rate: number, otherRate: number): number {
  if (rate >= 0 && rate <= 1 && rate + otherRate <= 1) return rate;
  throw new ConfigError(`Expected \`${name}\` to be from 0 to 1 (with the other rate, at most 1), got ${rate}`);
}

/** Reads a scripting value from its `x-demo-*` header or, failing that, the query string. */
function scripted(request: IncomingMessage, url: URL, header: string, searchParam: string): string | undefined {
  const value = request.headers[header];
  return (Array.isArray(value) ? value[0] : value) ?? url.searchParams.get(searchParam) ?? undefined;
}

/**
 * Starts a local HTTP partner that fails on purpose, for `boomerang local`, integration tests and benchmarks.
 *
 * A request may script its own fate: `x-demo-fail-times: N` (or `?failTimes=N`) with `x-demo-id: ID`
 * (or `?id=ID`) fails the first N requests for that id with 503, then succeeds. Other requests draw at
 * random: 400 with `permanentFailureRate`, a transient status with `failureRate`, else 200; with
 * `rateLimitPerSecond`, the requests over the limit get 429 first.
 * Per-id counts live in memory for the provider's lifetime (fine for demo sizes, about 100 bytes an id).
 * @example
 * const provider = await startFlakyProvider({ failureRate: 0 });
 * await fetch(`${provider.url}/hook?id=a&failTimes=2`); // 503, then 503, then 200
 * await provider.close();
 */
async function startFlakyProvider(options: FlakyProviderOptions = {}): Promise<FlakyProvider> {
  const permanentFailureRate = checkRate('permanentFailureRate', options.permanentFailureRate ?? 0, 0);
  let failureRate = checkRate('failureRate', options.failureRate ?? 0.3, permanentFailureRate);
  let down = options.down ?? false;
  const random = options.random ?? Math.random;
  const attemptsById = new Map<string, number>();
  const succeededIds = new Set<string>();
  const byStatus: Record<number, number> = {};
  let requests = 0;
  const { rateLimitPerSecond } = options;
  if (rateLimitPerSecond !== undefined && !(Number.isInteger(rateLimitPerSecond) && rateLimitPerSecond > 0))
    throw new ConfigError(`Expected \`rateLimitPerSecond\` to be a whole number above 0, got ${rateLimitPerSecond}`);
  const statuses = rateLimitPerSecond === undefined ? TRANSIENT_STATUSES : SERVER_FAILURES;
  let window = { second: 0, answered: 0 };

  /** Whether the rate limit turns this request away. */
  function overLimit(): boolean {
    if (rateLimitPerSecond === undefined) return false;
    const second = Math.floor(Date.now() / 1000);
    if (second !== window.second) window = { second, answered: 0 };
    window.answered += 1;
    return window.answered > rateLimitPerSecond;
  }
  const timers = new Set<NodeJS.Timeout>();

  function decide(request: IncomingMessage): { status: number; reason: string } {
    const url = new URL(request.url ?? '/', 'http://provider');
    const id = scripted(request, url, 'x-demo-id', 'id');
    const failTimes = scripted(request, url, 'x-demo-fail-times', 'failTimes');
    if (down) return { status: 503, reason: 'down' };
    if (overLimit()) return { status: 429, reason: `over the rate limit of ${rateLimitPerSecond} requests a second` };
    if (failTimes !== undefined) {
      if (id === undefined || !/^\d+$/.test(failTimes)) {
        return { status: 400, reason: 'bad script: x-demo-fail-times needs a whole number and an x-demo-id' };
      }
      const attempt = (attemptsById.get(id) ?? 0) + 1;
      attemptsById.set(id, attempt);
      return attempt <= Number(failTimes) ? { status: 503, reason: `scripted failure ${attempt}` } : ok(id);
    }
    const draw = random();
    if (draw < permanentFailureRate) return { status: 400, reason: 'permanent failure' };
    if (draw < permanentFailureRate + failureRate) {
      const status = statuses[Math.floor(random() * statuses.length)] ?? 503;
      return { status, reason: 'transient failure' };
    }
    return ok(id);
  }

  function ok(id: string | undefined): { status: number; reason: string } {
    if (id !== undefined) succeededIds.add(id);
    return { status: 200, reason: 'ok' };
  }

  function answer(request: IncomingMessage, response: ServerResponse): void {
    const { status, reason } = decide(request);
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    // Over the limit: the next window opens within the second.
    if (status === 429 && rateLimitPerSecond !== undefined) headers['retry-after'] = '1';
    else if (options.retryAfterSeconds !== undefined && (status === 429 || status === 503)) headers['retry-after'] = String(options.retryAfterSeconds);
    response.writeHead(status, headers).end(JSON.stringify({ status, reason }));
  }

  const server = createServer((request, response) => {
    requests += 1;
    // Read and drop the body so the connection can be kept alive for the next request.
    request.resume();
    if (!options.latencyMs) return answer(request, response);
    const timer = setTimeout(() => {
      timers.delete(timer);
      answer(request, response);
    }, options.latencyMs);
    timers.add(timer);
  });
  server.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => {
      let succeeded = 0;
      let failed = 0;
      for (const [status, count] of Object.entries(byStatus)) {
        if (status.startsWith('2')) succeeded += count;
        else failed += count;
      }
      return { requests, succeeded, failed, byStatus: { ...byStatus }, distinctIdsSucceeded: succeededIds.size };
    },
    setDown: (value) => {
      down = value;
    },
    setFailureRate: (rate) => {
      failureRate = checkRate('failureRate', rate, permanentFailureRate);
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      const closed = once(server, 'close');
      server.close();
      // Keep-alive sockets would hold close() open until they time out.
      server.closeAllConnections();
      await closed;
    },
  };
}

export { startFlakyProvider };
export type { FlakyProvider, FlakyProviderOptions };
