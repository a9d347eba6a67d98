import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createWebhookDelivery, httpTimeoutMsFromEnv } from '../../shared/examples/webhooks/webhook-delivery.js';
import type { BoomerangMessage, Handler, HandlerContext } from '../../shared/message/message.js';

/** One request as the partner saw it. */
type Seen = { method: string; path: string; headers: IncomingHttpHeaders; body: string };

/**
 * A real partner on 127.0.0.1. Routes: `/status/<code>` answers that code with a body naming it
 * (`?retryAfter=` sets the header, `?bodyChars=` pads the body); `/slow` answers 200 after 1 s; any
 * other path answers 200.
 */
async function startPartner(): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer(async (request, response) => {
    let body = '';
    for await (const chunk of request) body += String(chunk);
    const url = new URL(request.url ?? '/', 'http://partner');
    seen.push({ method: request.method ?? '', path: url.pathname, headers: request.headers, body });
    const [, route, code] = url.pathname.split('/');
    if (route === 'slow') {
      const timer = setTimeout(() => response.end('late'), 1_000);
      response.on('close', () => clearTimeout(timer));
      return;
    }
    if (route !== 'status') return void response.end('ok');
    const retryAfter = url.searchParams.get('retryAfter');
    if (retryAfter !== null) response.setHeader('retry-after', retryAfter);
    const padding = 'x'.repeat(Number(url.searchParams.get('bodyChars') ?? 0));
    response.writeHead(Number(code)).end(`partner says ${code}${padding}`);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

async function stop(server: Server): Promise<void> {
  const closed = once(server, 'close');
  server.close();
  server.closeAllConnections();
  await closed;
}

/** A delivery as the engine would hand it over; `payload` is JSON-encoded unless it is already a string. */
function messageOf(payload: unknown): BoomerangMessage {
  const body = Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload));
  return {
    body,
    json: <T>() => JSON.parse(body.toString()) as T,
    headers: {},
    properties: {} as BoomerangMessage['properties'],
    retryNo: 0,
    queue: 'webhooks',
    routingKey: 'webhooks',
    exchange: '',
  };
}

const contextOf = (signal = new AbortController().signal): HandlerContext => ({ signal, functionName: 'test' });

/** Runs `handler` on `payload`; always a promise, since a Handler may also return void. */
async function run(handler: Handler, payload: unknown, context = contextOf()): Promise<void> {
  await handler(messageOf(payload), context);
}

/** The error `delivery` rejects with; a delivery that resolves fails the test. */
async function rejectionOf(delivery: Promise<void>): Promise<Error & { retryAfterMs?: number }> {
  try {
    await delivery;
  } catch (error) {
    return error as Error & { retryAfterMs?: number };
  }
  throw new Error('expected the delivery to fail');
}

describe('createWebhookDelivery', () => {
  let partner: Awaited<ReturnType<typeof startPartner>>;
  const deliver = createWebhookDelivery({ httpTimeoutMs: 2_000 });
  const send = (payload: unknown, context?: HandlerContext) => run(deliver, payload, context);

  beforeAll(async () => {
    partner = await startPartner();
  });
  beforeEach(() => {
    partner.seen.length = 0;
  });
  afterAll(async () => {
    await stop(partner.server);
  });

  it.each([200, 201, 202, 204])('resolves when the partner answers %i', async (status) => {
    // Act
    const delivery = send({ url: `${partner.url}/status/${status}` });

    // Assess
    await expect(delivery).resolves.toBeUndefined();
    expect(partner.seen).toHaveLength(1);
  });

  it.each([
    {
      label: 'a string body as is, with POST by default',
      payload: { body: 'a=1&b=2', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      expected: { method: 'POST', body: 'a=1&b=2', type: 'application/x-www-form-urlencoded' },
    },
    {
      label: 'an object body as JSON',
      payload: { method: 'PUT', body: { order: 7 } },
      expected: { method: 'PUT', body: '{"order":7}', type: 'application/json' },
    },
    {
      label: 'a JSON body with the content-type it was given',
      payload: { body: [1, 2], headers: { 'Content-Type': 'application/vnd.partner+json' } },
      expected: { method: 'POST', body: '[1,2]', type: 'application/vnd.partner+json' },
    },
    {
      label: 'no body for null',
      payload: { method: 'DELETE', body: null },
      expected: { method: 'DELETE', body: '', type: undefined },
    },
  ])('sends $label', async ({ payload, expected }) => {
    // Act
    await send({ url: `${partner.url}/hook`, ...payload });

    // Assess
    const [request] = partner.seen;
    expect(request).toMatchObject({ method: expected.method, path: '/hook', body: expected.body });
    expect(request?.headers['content-type']).toBe(expected.type);
  });

  it('passes the headers it was given', async () => {
    // Act
    await send({ url: `${partner.url}/hook`, headers: { authorization: 'Bearer t0ken', 'x-trace': 'abc' } });

    // Assess
    expect(partner.seen[0]?.headers).toMatchObject({ authorization: 'Bearer t0ken', 'x-trace': 'abc' });
  });

  it.each([408, 425, 429, 500, 501, 502, 503, 504, 505])('asks for a retry on %i', async (status) => {
    // Act
    const delivery = send({ url: `${partner.url}/status/${status}` });

    // Assess
    await expect(delivery).rejects.toMatchObject({
      name: 'RetryableError',
      retryable: true,
      retryAfterMs: undefined,
      message: `webhook POST ${partner.url} answered ${status}: partner says ${status}`,
    });
  });

  it.each([
    [429, true],
    [503, false],
    [408, false],
  ])('on %i, asks to pause the queue: %s (only a 429 says "slow down")', async (status, pauseQueue) => {
    await expect(send({ url: `${partner.url}/status/${status}` })).rejects.toMatchObject({ pauseQueue });
  });

  it.each([
    { label: 'delta-seconds', retryAfter: '7', min: 7_000, max: 7_000 },
    { label: 'an invalid value', retryAfter: 'soon', min: undefined, max: undefined },
  ])('takes retryAfterMs from a Retry-After of $label', async ({ retryAfter, min, max }) => {
    // Act
    const error = await rejectionOf(send({ url: `${partner.url}/status/429?retryAfter=${encodeURIComponent(retryAfter)}` }));

    // Assess
    if (min === undefined) return expect(error.retryAfterMs).toBeUndefined();
    expect(error.retryAfterMs).toBeGreaterThanOrEqual(min);
    expect(error.retryAfterMs).toBeLessThanOrEqual(max);
  });

  it('takes retryAfterMs from a Retry-After HTTP-date, counted from when the answer came', async () => {
    // Prepare: HTTP-dates have whole seconds, so the date the partner sends is the second it names.
    const dueMs = Math.floor((Date.now() + 30_000) / 1000) * 1000;
    const retryAfter = new Date(dueMs).toUTCString();
    const sentAt = Date.now();

    // Act
    const error = await rejectionOf(send({ url: `${partner.url}/status/429?retryAfter=${encodeURIComponent(retryAfter)}` }));
    const answeredBy = Date.now();

    // Assess: bounds from the clock around the call, so a slow machine cannot fail it.
    expect(error.retryAfterMs).toBeGreaterThanOrEqual(dueMs - answeredBy);
    expect(error.retryAfterMs).toBeLessThanOrEqual(dueMs - sentAt);
  });

  it.each([300, 400, 401, 403, 404, 410, 422])('parks the message on %i', async (status) => {
    // Act
    const delivery = send({ url: `${partner.url}/status/${status}?retryAfter=5` });

    // Assess
    await expect(delivery).rejects.toMatchObject({
      name: 'UnrecoverableError',
      retryable: false,
      message: `webhook POST ${partner.url} answered ${status}: partner says ${status}`,
    });
  });

  it('reports a 200-character snippet of the answer, and neither the path nor the headers', async () => {
    // Act
    const error = await rejectionOf(send({ url: `${partner.url}/status/500?bodyChars=10000`, headers: { authorization: 'Bearer s3cret' } }));

    // Assess
    const snippet = `partner says 500${'x'.repeat(184)}…`;
    expect(error.message).toBe(`webhook POST ${partner.url} answered 500: ${snippet}`);
  });

  it('asks for a retry when the partner is slower than httpTimeoutMs', async () => {
    // Prepare
    const impatient = createWebhookDelivery({ httpTimeoutMs: 100 });
    const startedMs = Date.now();

    // Act
    const delivery = run(impatient, { url: `${partner.url}/slow` });

    // Assess
    await expect(delivery).rejects.toMatchObject({
      name: 'RetryableError',
      message: `webhook POST ${partner.url} timed out after 100 ms`,
    });
    expect(Date.now() - startedMs).toBeLessThan(900);
  });

  it('gives up at once when the invocation is aborted', async () => {
    // Prepare
    const startedMs = Date.now();

    // Act
    const delivery = send({ url: `${partner.url}/slow` }, contextOf(AbortSignal.timeout(50)));

    // Assess
    await expect(delivery).rejects.toMatchObject({
      name: 'RetryableError',
      message: `webhook POST ${partner.url} was aborted: the invocation ran out of time`,
    });
    expect(Date.now() - startedMs).toBeLessThan(900);
  });

  it('asks for a retry when the connection is refused', async () => {
    // Prepare
    const gone = await startPartner();
    await stop(gone.server);

    // Act
    const delivery = send({ url: `${gone.url}/hook` });

    // Assess
    await expect(delivery).rejects.toMatchObject({
      name: 'RetryableError',
      message: expect.stringMatching(/^webhook POST http:\/\/127\.0\.0\.1:\d+ failed: connect ECONNREFUSED/),
    });
  });

  it.each([
    { payload: 'not json', reason: 'body is not valid JSON (8 bytes)' },
    { payload: '[{"url":"http://x"}]', reason: 'body is not a JSON object: got an array' },
    { payload: '"http://x"', reason: 'body is not a JSON object: got string' },
    { payload: 'null', reason: 'body is not a JSON object: got null' },
    { payload: {}, reason: 'has no valid url: got undefined; expected an absolute http(s) URL' },
    { payload: { url: 'ftp://x' }, reason: 'has no valid url: got a URL with the scheme "ftp:"; expected an absolute http(s) URL' },
    { payload: { url: '/hook' }, reason: 'has no valid url: got a string of 5 characters that is not an absolute URL; expected an absolute http(s) URL' },
    { payload: { url: 42 }, reason: 'has no valid url: got number; expected an absolute http(s) URL' },
    { payload: { url: 'https://me:pw@x.test/' }, reason: 'has a url with credentials; send them in headers' },
    { payload: { url: 'http://x.test', method: 7 }, reason: 'has a method that is not a string: got 7' },
    {
      payload: { url: 'http://x.test', method: 'NOT VALID' },
      reason: "is not a valid HTTP request: 'NOT VALID' is not a valid HTTP method.",
    },
    {
      payload: { url: 'http://x.test', method: 'GET', body: 'x' },
      reason: 'is not a valid HTTP request: Request with GET/HEAD method cannot have body.',
    },
    {
      payload: { url: 'http://x.test', headers: ['authorization: Bearer t'] },
      reason: 'has headers that are not an object of strings: got an array',
    },
    { payload: { url: 'http://x.test', headers: { 'x-n': 1 } }, reason: 'has header "x-n" that is not a string' },
    {
      payload: { url: 'http://x.test', headers: { authorization: 'Bearer t\n0ken' } },
      reason: 'has header "authorization" that is not a valid HTTP header name or value',
    },
  ])('parks a message that is invalid: $reason', async ({ payload, reason }) => {
    // Act
    const delivery = send(payload);

    // Assess
    await expect(delivery).rejects.toMatchObject({ name: 'UnrecoverableError', message: `webhook message ${reason}` });
  });

  it.each([
    ['a space in the host', 'https://hooks example/services/T0/B0/s3cr3tPath?token=abc123'],
    ['a bad port', 'https://hooks.example:99999/services/T0/B0/s3cr3tPath?token=abc123'],
    ['no scheme', 'hooks.example/services/T0/B0/s3cr3tPath?token=abc123'],
    ['another scheme', 'webcal://hooks.example/services/T0/B0/s3cr3tPath?token=abc123'],
    ['a bad percent in the host', 'https://ho%zzoks.example/services/T0/B0/s3cr3tPath?token=abc123'],
  ])('parks a url with %s without its path or token in the reason', async (_case, url) => {
    // Act
    const error = (await send({ url }).catch((e: unknown) => e)) as Error;

    // Assess
    expect(error).toMatchObject({ name: 'UnrecoverableError', message: expect.stringMatching(/^webhook message has no valid url: /) });
    expect(error.message).not.toMatch(/s3cr3tPath|abc123|services/);
  });

  it('refuses an httpTimeoutMs that is not a positive integer', () => {
    // Act
    const create = () => createWebhookDelivery({ httpTimeoutMs: 0 });

    // Assess
    expect(create).toThrow('httpTimeoutMs must be an integer from 1 to 2147483647; got 0');
  });
});

describe('httpTimeoutMsFromEnv', () => {
  it.each([
    { raw: undefined, expected: 10_000 },
    { raw: '', expected: 10_000 },
    { raw: '2500', expected: 2_500 },
  ])('reads $raw as $expected', ({ raw, expected }) => {
    // Act
    const timeoutMs = httpTimeoutMsFromEnv({ HTTP_TIMEOUT_MS: raw });

    // Assess
    expect(timeoutMs).toBe(expected);
  });

  it.each(['abc', '0', '1.5', '3000000000'])('refuses "%s", naming the variable and the value', (raw) => {
    // Act
    const read = () => httpTimeoutMsFromEnv({ HTTP_TIMEOUT_MS: raw });

    // Assess
    expect(read).toThrow(
      expect.objectContaining({
        name: 'ConfigError',
        message: `HTTP_TIMEOUT_MS must be an integer from 1 to 2147483647; got "${raw}"`,
      }),
    );
  });
});
