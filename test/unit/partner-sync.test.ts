import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPartnerSync } from '../../shared/examples/partner-sync/partner-sync.js';
import type { BoomerangMessage, HandlerContext } from '../../shared/message/message.js';

type Seen = { readonly method: string; readonly url: string; readonly key: string | undefined; readonly body: string };

let server: Server;
let baseUrl: string;
const seen: Seen[] = [];

/** The partner: the status is the record's id prefix (`409-a` answers 409); 429 and 503 send Retry-After: 7. */
beforeAll(async () => {
  server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      seen.push({ method: request.method ?? '', url: request.url ?? '', key: request.headers['idempotency-key'] as string | undefined, body });
      const status = Number(/\/records\/(\d{3})-/.exec(request.url ?? '')?.[1] ?? 200);
      response.writeHead(status, status === 429 || status === 503 ? { 'retry-after': '7' } : {}).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function message(body: unknown): BoomerangMessage {
  return { body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)) } as BoomerangMessage;
}

const context = { signal: new AbortController().signal } as HandlerContext;

/** What the handler threw for `body` (name, retryAfterMs), or 'ok'. */
async function outcome(body: unknown, options = {}): Promise<unknown> {
  try {
    await createPartnerSync({ baseUrl, ...options })(message(body), context);
    return 'ok';
  } catch (error) {
    const { name, retryAfterMs } = error as { name: string; retryAfterMs?: number };
    return retryAfterMs === undefined ? name : { name, retryAfterMs };
  }
}

describe('createPartnerSync', () => {
  it('PUTs the record as JSON to /records/<id> with the id as idempotency key', async () => {
    // Act
    const result = await outcome({ id: 'r-1', record: { name: 'Ada' } });
    // Assess
    expect(result).toBe('ok');
    expect(seen.at(-1)).toEqual({ method: 'PUT', url: '/api/records/r-1', key: 'r-1', body: '{"name":"Ada"}' });
  });

  it.each<[string, unknown]>([
    ['409-a', 'PartnerConflictError'],
    ['429-a', { name: 'PartnerRateLimitedError', retryAfterMs: 7000 }],
    ['503-a', { name: 'PartnerUnavailableError', retryAfterMs: 7000 }],
    ['500-a', 'PartnerUnavailableError'],
    ['404-a', 'UnrecoverableError'],
  ])('answers %s with %j', async (id, expected) => {
    expect(await outcome({ id, record: {} })).toEqual(expected);
  });

  it.each<[string, unknown]>([
    ['not JSON', 'nope'],
    ['no id', { record: {} }],
    ['an id with a slash', { id: 'a/b', record: {} }],
    ['a record that is not an object', { id: 'a', record: [1] }],
  ])('parks a message with %s: it can never sync', async (_what, body) => {
    expect(await outcome(body)).toBe('UnrecoverableError');
  });

  it('retries, never parks, while PARTNER_API_URL is missing', async () => {
    // Prepare
    const saved = process.env.PARTNER_API_URL;
    delete process.env.PARTNER_API_URL;
    try {
      // Act
      const result = await outcome({ id: 'a', record: {} }, { baseUrl: undefined });
      // Assess
      expect(result).toBe('RetryableError');
    } finally {
      if (saved !== undefined) process.env.PARTNER_API_URL = saved;
    }
  });

  it('treats a partner that does not answer as unavailable', async () => {
    expect(await outcome({ id: 'a', record: {} }, { baseUrl: 'http://127.0.0.1:1' })).toBe('PartnerUnavailableError');
  });
});
