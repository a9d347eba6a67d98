import { timingSafeEqual } from 'node:crypto';

/** The custom header every state-changing request must carry: a cross-site form cannot set it, and a cross-site `fetch` with it needs a CORS preflight the console never grants. */
const CSRF_HEADER = 'x-boomerang-console';

/**
 * The header that carries the token on every API request. Never a cookie: a browser sends a cookie of
 * 127.0.0.1 to every port of 127.0.0.1, so any other local server would receive it.
 */
const TOKEN_HEADER = 'x-boomerang-token';

/** What {@link checkAccess} reads of a request. */
type AccessRequest = {
  readonly method: string;
  readonly url: URL;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
};

/** What the console's HTTP server settles before routing a request. */
type AccessOptions = {
  readonly token: string;
  /** `host:port` values the Host header may hold: anything else is a DNS-rebinding page, refused. */
  readonly allowedHosts: readonly string[];
};

type AccessDecision =
  | { readonly kind: 'allow' /** `GET /?token=<the token>`: answer with the page that keeps the token (in the tab only). */; readonly landing: boolean }
  | { readonly kind: 'deny'; readonly status: 401 | 403; readonly reason: string };

const SAFE_METHODS = new Set(['GET', 'HEAD']);
const WRONG_TOKEN = 'the access token is missing or wrong: open the URL the console printed (it ends with ?token=...)';

/**
 * Who may use the console: a request with the right Host; for the API, the token in the
 * `x-boomerang-token` header and, when it changes state, from the console's own page (same Origin /
 * Sec-Fetch-Site, plus the custom header). The page and its script hold no data and load without
 * the token; `?token=` is read on the landing (`GET /`) only, to hand the token to the page.
 * Cross-site checks come first, so a forged POST is a 403 even without the token.
 * @example checkAccess({ method: 'GET', url: new URL('http://127.0.0.1:8123/?token=t'), headers: { host: '127.0.0.1:8123' } }, options)
 */
function checkAccess(request: AccessRequest, options: AccessOptions): AccessDecision {
  const host = one(request.headers.host);
  if (host === undefined || !options.allowedHosts.includes(host.toLowerCase()))
    return deny(403, `unknown host ${JSON.stringify(host ?? '')}: open the URL the console printed`);
  if (!SAFE_METHODS.has(request.method)) {
    const origin = one(request.headers.origin);
    if (origin !== undefined && !options.allowedHosts.some((h) => origin.toLowerCase() === `http://${h}`))
      return deny(403, `cross-site request from ${origin} refused`);
    const site = one(request.headers['sec-fetch-site']);
    if (site !== undefined && site !== 'same-origin') return deny(403, `cross-site request (Sec-Fetch-Site: ${site}) refused`);
    if (one(request.headers[CSRF_HEADER]) !== '1')
      return deny(403, `a request that changes something must come from the console's page (header ${CSRF_HEADER} missing)`);
  }
  const fromUrl = request.url.searchParams.get('token');
  if (!request.url.pathname.startsWith('/api/')) {
    if (fromUrl === null) return { kind: 'allow', landing: false };
    if (sameSecret(fromUrl, options.token)) return { kind: 'allow', landing: request.url.pathname === '/' };
    return deny(401, WRONG_TOKEN);
  }
  const fromHeader = one(request.headers[TOKEN_HEADER]);
  if (fromHeader !== undefined && sameSecret(fromHeader, options.token)) return { kind: 'allow', landing: false };
  return deny(401, WRONG_TOKEN);
}

/** What {@link allowedHosts} reads of `os.networkInterfaces()`. */
type Interfaces = Readonly<Record<string, readonly { readonly address: string }[] | undefined>>;

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
const EVERY_INTERFACE = new Set(['0.0.0.0', '::']);

/**
 * The `host:port` values a request's Host may hold: the address the console listens on; on loopback,
 * `localhost` and `127.0.0.1` too; on every interface (`0.0.0.0`, `::`), each of this machine's own
 * addresses and `localhost`: never a name a rebinding page could point here.
 * @example allowedHosts('127.0.0.1', 8123, os.networkInterfaces()) // ['127.0.0.1:8123', 'localhost:8123']
 */
function allowedHosts(host: string, port: number, interfaces: Interfaces): string[] {
  const addresses = EVERY_INTERFACE.has(host)
    ? [...Object.values(interfaces).flatMap((list) => (list ?? []).map((i) => i.address)), 'localhost']
    : [host, ...(LOOPBACK.has(host) ? ['localhost', '127.0.0.1'] : [])];
  const hostPort = (address: string): string => `${address.includes(':') ? `[${address}]` : address}:${port}`.toLowerCase();
  return [...new Set(addresses.map(hostPort))];
}

function deny(status: 401 | 403, reason: string): AccessDecision {
  return { kind: 'deny', status, reason };
}

function one(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Compares in constant time, so the answer's timing tells nothing about the token. */
function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export { allowedHosts, checkAccess };
export type { AccessOptions };
