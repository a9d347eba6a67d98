import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the partner answered. */
type PartnerRequest = { readonly at: number; readonly id: string; readonly status: number };

/** A running partner; see {@link startSlowDownPartner}. */
type SlowDownPartner = {
  readonly url: string;
  /** Every request, in order. */
  readonly requests: readonly PartnerRequest[];
  /** Epoch ms of the first request: the rate limit's window starts there. Undefined before it. */
  windowStart(): number | undefined;
  close(): Promise<void>;
};

/**
 * A local partner that rate-limits its first `limitedForMs` (from its first request): it answers 429
 * with `Retry-After: <retryAfterSeconds>` until then, and 200 after. Requests name their message in
 * `x-id`.
 * @example const partner = await startSlowDownPartner({ limitedForMs: 10_000, retryAfterSeconds: 5 });
 */
async function startSlowDownPartner(options: { readonly limitedForMs: number; readonly retryAfterSeconds: number }): Promise<SlowDownPartner> {
  const requests: PartnerRequest[] = [];
  let firstAt: number | undefined;
  const server = createServer((request, response) => {
    request.resume();
    const at = Date.now();
    firstAt ??= at;
    const limited = at - firstAt < options.limitedForMs;
    const id = request.headers['x-id'];
    requests.push({ at, id: typeof id === 'string' ? id : '?', status: limited ? 429 : 200 });
    if (limited) response.writeHead(429, { 'retry-after': String(options.retryAfterSeconds) }).end('slow down');
    else response.writeHead(200).end('ok');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    windowStart: () => firstAt,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

export { startSlowDownPartner };
export type { SlowDownPartner };
