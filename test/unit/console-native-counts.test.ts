import { describe, expect, it } from 'vitest';
import { managementApiOf, managementUrlOf, type NativeCounts, nativeCountsOf, nativeCountsView, readNativeCounts } from '../../shared/console/native-counts.js';

const API = { url: 'http://mq.internal:15672', username: 'ops', password: 's3cr3t' };
const NEXT = 1_796_013_078_351;

/** A fake `fetch` that records each call and answers with `answer(url, init)`. */
function fakeFetch(answer: (url: string, init: RequestInit) => Promise<Response> | Response): { fetch: typeof fetch; calls: [string, RequestInit][] } {
  const calls: [string, RequestInit][] = [];
  return {
    calls,
    fetch: (async (url: string, init: RequestInit) => {
      calls.push([url, init]);
      return answer(url, init);
    }) as typeof fetch,
  };
}

describe('managementUrlOf', () => {
  it.each([
    ['the local default port', 'amqp://guest:guest@127.0.0.1:5672', 'http://127.0.0.1:15672'],
    ["the project's 4.3 node", 'amqp://guest:guest@127.0.0.1:5674/', 'http://127.0.0.1:15674'],
    ['no port: 5672', 'amqp://localhost', 'http://localhost:15672'],
    ['TLS without a port: 5671, so HTTPS on 15671', 'amqps://app:pw@mq.internal/prod', 'https://mq.internal:15671'],
    [
      'Amazon MQ: its web console, HTTPS on 443',
      'amqps://app:p%40ss@b-1234abcd.mq.eu-west-1.amazonaws.com:5671',
      'https://b-1234abcd.mq.eu-west-1.amazonaws.com',
    ],
    ["Amazon MQ in China's partition", 'amqps://b-1234abcd.mq.cn-north-1.amazonaws.com.cn:5671', 'https://b-1234abcd.mq.cn-north-1.amazonaws.com.cn'],
    ['an IPv6 address', 'amqp://[::1]:5672', 'http://[::1]:15672'],
    ['a port with no room above it', 'amqp://mq:60000', undefined],
    ['not a URL', 'mq.internal:5672', undefined],
  ])('%s: %s → %s', (_what, amqpUrl, expected) => {
    expect(managementUrlOf(amqpUrl)).toBe(expected);
  });
});

describe('managementApiOf', () => {
  it("logs in as the AMQP URL's user, decoded as amqplib decodes it, and never puts the login in the URL", () => {
    expect(managementApiOf('amqps://ops:p%40ss%u00E4@b-1.mq.eu-west-1.amazonaws.com:5671/%2F')).toEqual({
      url: 'https://b-1.mq.eu-west-1.amazonaws.com',
      username: 'ops',
      password: 'p@ssä',
    });
  });

  it('logs in as guest/guest when the AMQP URL names no user, as the AMQP connection does', () => {
    expect(managementApiOf('amqp://localhost')).toEqual({ url: 'http://localhost:15672', username: 'guest', password: 'guest' });
  });

  it('takes the configured address instead, without its trailing slash', () => {
    expect(managementApiOf('amqp://ops:pw@10.0.0.7:5672', 'https://mq.example.com/rabbitmq/')).toEqual({
      url: 'https://mq.example.com/rabbitmq',
      username: 'ops',
      password: 'pw',
    });
  });
});

describe('nativeCountsOf', () => {
  it.each<[string, unknown, NativeCounts]>([
    [
      "4.3.6's own count of the delayed ones (measured: 7 = 2 ready + 4 delayed + 1 unacked)",
      { messages: 7, messages_ready: 2, messages_delayed: 4, messages_unacknowledged: 1, next_delayed_at: NEXT },
      { kind: 'counted', ready: 2, delayed: 4, unacked: 1, nextDueAtMs: NEXT },
    ],
    [
      'no messages_delayed: the total less the ready and the unacked ones',
      { messages: 7, messages_ready: 2, messages_unacknowledged: 1 },
      { kind: 'counted', ready: 2, delayed: 4, unacked: 1, nextDueAtMs: null },
    ],
    [
      'counts sampled as they changed: never fewer than none delayed',
      { messages: 2, messages_ready: 3, messages_unacknowledged: 0 },
      { kind: 'counted', ready: 3, delayed: 0, unacked: 0, nextDueAtMs: null },
    ],
    [
      'none delayed: no next due time, though the API still names the last one',
      { messages: 3, messages_ready: 3, messages_delayed: 0, messages_unacknowledged: 0, next_delayed_at: NEXT },
      { kind: 'counted', ready: 3, delayed: 0, unacked: 0, nextDueAtMs: null },
    ],
  ])('%s', (_what, json, expected) => {
    expect(nativeCountsOf(json)).toEqual(expected);
  });

  it.each([
    ['a queue not sampled yet', { name: 'orders' }],
    ['a count that is not a number', { messages: '7', messages_ready: 2, messages_unacknowledged: 1 }],
    ['no JSON object', null],
  ])('says why there are no counts for %s', (_what, json) => {
    expect(nativeCountsOf(json)).toEqual({ kind: 'unknown', reason: expect.stringContaining('the management API has no counts for it') });
  });
});

describe('readNativeCounts', () => {
  it("asks for each queue's counts with the broker's login, its vhost and name encoded", async () => {
    // Prepare
    const { fetch, calls } = fakeFetch(() =>
      Response.json({ messages: 5, messages_ready: 1, messages_delayed: 3, messages_unacknowledged: 1, next_delayed_at: NEXT }),
    );
    // Act
    const counts = await readNativeCounts(API, 'prod/eu', ['orders', 'a b'], { fetch });
    // Assess
    expect(counts).toEqual(
      new Map([
        ['orders', { kind: 'counted', ready: 1, delayed: 3, unacked: 1, nextDueAtMs: NEXT }],
        ['a b', { kind: 'counted', ready: 1, delayed: 3, unacked: 1, nextDueAtMs: NEXT }],
      ]),
    );
    expect(calls.map(([url]) => url.split('?')[0])).toEqual([
      'http://mq.internal:15672/api/queues/prod%2Feu/orders',
      'http://mq.internal:15672/api/queues/prod%2Feu/a%20b',
    ]);
    expect(calls[0]?.[1].headers).toEqual({ authorization: `Basic ${Buffer.from('ops:s3cr3t').toString('base64')}` });
    expect(calls[0]?.[1].redirect).toBe('manual');
  });

  it.each<[string, () => Promise<Response> | Response, string]>([
    [
      'a login the API refuses (a user without a management tag)',
      () => Response.json({ error: 'not_authorised' }, { status: 401 }),
      "http://mq.internal:15672 refused the broker's login (it lets in users tagged management, monitoring or administrator only)",
    ],
    ['a queue it does not have', () => Response.json({ error: 'Object Not Found' }, { status: 404 }), 'has no queue "orders" in vhost "/"'],
    [
      'a redirect, which could carry the login elsewhere',
      () => new Response(null, { status: 302, headers: { location: 'https://elsewhere' } }),
      'answered HTTP 302 (a redirect: not followed)',
    ],
    ['a page that is not the API', () => new Response('<html>'), "answered with something other than the management API's JSON"],
    [
      'nothing listening',
      () => Promise.reject(new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) })),
      'http://mq.internal:15672 did not answer (ECONNREFUSED)',
    ],
  ])('says why for %s, never with the password', async (_what, answer, reason) => {
    // Prepare
    const { fetch } = fakeFetch(answer);
    // Act
    const counts = await readNativeCounts(API, '/', ['orders'], { fetch });
    // Assess
    expect(counts.get('orders')).toEqual({ kind: 'unknown', reason: expect.stringContaining(reason) });
    expect(JSON.stringify([...counts])).not.toContain('s3cr3t');
  });

  it('gives up on an API that does not answer in time', async () => {
    // Prepare: an API that never answers, only the time limit ends the call
    const { fetch } = fakeFetch(
      (_url, init) => new Promise((_resolve, reject) => init.signal?.addEventListener('abort', () => reject((init.signal as AbortSignal).reason))),
    );
    // Act
    const counts = await readNativeCounts(API, '/', ['orders'], { fetch, timeoutMs: 50 });
    // Assess
    expect(counts.get('orders')).toEqual({ kind: 'unknown', reason: 'http://mq.internal:15672 did not answer within 50 ms' });
  });

  it('says so for every queue when there is no address to ask', async () => {
    const counts = await readNativeCounts(undefined, '/', ['orders', 'invoices']);
    expect([...counts.values()].map((c) => c.kind)).toEqual(['unknown', 'unknown']);
  });
});

describe('nativeCountsView', () => {
  it('shows the ready ones as AMQP counts them, the others as the API does, and when the next is due in words', () => {
    expect(nativeCountsView({ kind: 'counted', ready: 9, delayed: 4, unacked: 1, nextDueAtMs: 90_000 }, 2, 0)).toEqual({
      kind: 'counted',
      ready: 2,
      delayed: 4,
      unacked: 1,
      nextDueIn: '1 min 30 s',
    });
  });

  it('names the option that sets the address when the counts are not known', () => {
    expect(nativeCountsView({ kind: 'unknown', reason: 'http://mq:15672 did not answer within 2000 ms' }, 2, 0)).toEqual({
      kind: 'unknown',
      reason: 'http://mq:15672 did not answer within 2000 ms',
      option: 'advanced.managementUrl',
      variable: 'MANAGEMENT_URL',
    });
  });

  it('shows nothing apart for a work queue that does not exist', () => {
    expect(nativeCountsView(undefined, null, 0)).toBeNull();
  });
});
