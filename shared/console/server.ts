import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { allowedHosts, checkAccess, type AccessOptions } from './access.js';
import { answerApi } from './api.js';
import type { ConsoleAssets } from './assets.js';
import type { ConsoleService } from './console-service.js';
import { ConsoleInputError } from './errors.js';

/** Options of {@link startConsoleServer}. */
type ConsoleServerOptions = {
  readonly service: ConsoleService;
  readonly assets: ConsoleAssets;
  /** Interface to listen on. Anything but loopback exposes the parking lot to the network. @default '127.0.0.1' */
  readonly host?: string;
  /** @default 0 (a free port) */
  readonly port?: number;
  /** @default 32 random bytes, base64url */
  readonly token?: string;
};

/** A running console. */
type ConsoleServer = {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** The origin with `/?token=...`: what the operator opens. */
  readonly url: string;
  readonly token: string;
  close(): Promise<void>;
};

/** Request bodies above this are refused (an edited body is at most 1 MB). */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
} as const;

/**
 * Starts the console's HTTP server: the front end and its JSON API, every request checked by
 * {@link checkAccess} (token, host, cross-site).
 * @example
 * const server = await startConsoleServer({ service, assets: await buildConsoleAssets() });
 * console.log(server.url); // http://127.0.0.1:41234/?token=...
 */
async function startConsoleServer(options: ConsoleServerOptions): Promise<ConsoleServer> {
  const token = options.token ?? randomBytes(32).toString('base64url');
  const host = options.host ?? '127.0.0.1';
  let access: AccessOptions | undefined;
  const server = createServer((request, response) => {
    void handle(request, response, options, access as AccessOptions).catch(() => {
      if (!response.headersSent) send(response, 500, 'text/plain', 'internal error');
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  // Bound to every interface, the printed URL names this machine the one way every browser accepts.
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const hostPart = shown.includes(':') ? `[${shown}]` : shown;
  access = { token, allowedHosts: allowedHosts(host, port, networkInterfaces()) };
  const origin = `http://${hostPart}:${port}`;
  return {
    origin,
    url: `${origin}/?token=${token}`,
    token,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function handle(request: IncomingMessage, response: ServerResponse, options: ConsoleServerOptions, access: AccessOptions): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://console.invalid');
  const method = request.method ?? 'GET';
  const decision = checkAccess({ method, url, headers: request.headers }, access);
  if (decision.kind === 'deny') return send(response, decision.status, 'application/json', JSON.stringify({ error: decision.reason }));
  // The landing hands the token to the page, which keeps it in this tab (sessionStorage) and sends it
  // in a header: no cookie, which the browser would send to every other server on this host. No
  // redirect either: nothing taken from the request decides where the browser goes.
  if (decision.landing && method === 'GET') return send(response, 200, 'text/html; charset=utf-8', withToken(options.assets.html, access.token));
  if (url.pathname === '/' && method === 'GET') return send(response, 200, 'text/html; charset=utf-8', options.assets.html);
  if (url.pathname === '/app.js' && method === 'GET') return send(response, 200, 'text/javascript; charset=utf-8', options.assets.js);
  if (url.pathname === '/app.css' && method === 'GET') return send(response, 200, 'text/css; charset=utf-8', options.assets.css);
  if (!url.pathname.startsWith('/api/')) return send(response, 404, 'application/json', JSON.stringify({ error: `nothing at ${url.pathname}` }));
  const answer = await answerApi(options.service, method, url, () => readJson(request));
  send(response, answer.status, 'application/json', JSON.stringify(answer.body));
}

/** The page with the token in a `<meta>` the front end reads once, then removes. */
function withToken(html: string, token: string): string {
  const attribute = token.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  return html.replace('<head>', `<head>\n<meta name="boomerang-token" content="${attribute}">`);
}

function send(response: ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type });
  response.end(body);
}

/** The request's JSON object; a `ConsoleInputError` (400) when it is too big or not an object. */
async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new ConsoleInputError(`the request body is over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let parsed: unknown;
  try {
    parsed = text === '' ? {} : JSON.parse(text);
  } catch {
    throw new ConsoleInputError('the request body must be JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ConsoleInputError('the request body must be a JSON object');
  return parsed as Record<string, unknown>;
}

export { startConsoleServer };
export type { ConsoleServer };
