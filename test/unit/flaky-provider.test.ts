import { afterEach, describe, expect, it, vi } from 'vitest';
import { type FlakyProvider, type FlakyProviderOptions, startFlakyProvider } from '../../shared/demo/flaky-provider.js';
import { seededRandom } from '../helpers/seeded-random.js';

/** Statuses of `count` requests sent one after the other (bodies read, so sockets are reused). */
async function statusesOf(url: string, count: number, headers: Record<string, string> = {}): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const response = await fetch(url, { method: 'POST', headers, body: '{}' });
    await response.text();
    statuses.push(response.status);
  }
  return statuses;
}

describe('startFlakyProvider', () => {
  const started: FlakyProvider[] = [];
  const start = async (options: FlakyProviderOptions) => {
    const provider = await startFlakyProvider(options);
    started.push(provider);
    return provider;
  };

  afterEach(async () => {
    await Promise.all(started.splice(0).map((provider) => provider.close()));
  });

  it.each([
    { via: 'headers', path: '/hook', headers: { 'x-demo-id': 'order-1', 'x-demo-fail-times': '2' } },
    { via: 'the query', path: '/hook?id=order-1&failTimes=2', headers: {} as Record<string, string> },
  ])('fails the first N requests of an id scripted through $via, then succeeds', async ({ path, headers }) => {
    // Prepare: random failures on every request, which scripted requests must not see.
    const provider = await start({ failureRate: 1 });

    // Act
    const statuses = await statusesOf(`${provider.url}${path}`, 4, headers);

    // Assess
    expect(statuses).toEqual([503, 503, 200, 200]);
  });

  it('counts scripted failures per id', async () => {
    // Prepare
    const provider = await start({ failureRate: 0 });
    const url = (id: string) => `${provider.url}/hook?id=${id}&failTimes=1`;

    // Act
    const statuses = [
      ...(await statusesOf(url('a'), 1)),
      ...(await statusesOf(url('b'), 1)),
      ...(await statusesOf(url('a'), 1)),
      ...(await statusesOf(url('b'), 1)),
    ];

    // Assess
    expect(statuses).toEqual([503, 503, 200, 200]);
  });

  it.each([
    { label: 'without an id', path: '/hook?failTimes=2' },
    { label: 'with a count that is not a whole number', path: '/hook?id=a&failTimes=two' },
  ])('answers 400 to a script $label', async ({ path }) => {
    // Prepare
    const provider = await start({ failureRate: 0 });

    // Act
    const response = await fetch(`${provider.url}${path}`);

    // Assess
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ reason: expect.stringContaining('bad script') });
  });

  it.each([
    { label: 'no failures', options: { failureRate: 0 }, allowed: [200] },
    { label: 'only transient failures', options: { failureRate: 1 }, allowed: [429, 500, 502, 503, 504] },
    { label: 'only permanent failures', options: { failureRate: 0, permanentFailureRate: 1 }, allowed: [400] },
  ])('draws $label from its rates', async ({ options, allowed }) => {
    // Prepare
    const provider = await start({ ...options, random: seededRandom(7) });

    // Act
    const statuses = await statusesOf(provider.url, 20);

    // Assess
    expect(statuses.every((status) => allowed.includes(status))).toBe(true);
  });

  it('repeats the same answers for the same seed', async () => {
    // Prepare
    const options = { failureRate: 0.4, permanentFailureRate: 0.2 };
    const [first, second] = [await start({ ...options, random: seededRandom(42) }), await start({ ...options, random: seededRandom(42) })];

    // Act
    const statuses = [await statusesOf(first.url, 30), await statusesOf(second.url, 30)];

    // Assess
    expect(statuses[0]).toEqual(statuses[1]);
    expect(new Set(statuses[0]).size).toBeGreaterThan(2);
  });

  it('answers 503 with Retry-After to everything while down, and recovers', async () => {
    // Prepare
    const provider = await start({ failureRate: 0, down: true, retryAfterSeconds: 3 });

    // Act
    const whileDown = await fetch(`${provider.url}/hook?id=a&failTimes=0`);
    await whileDown.text();
    provider.setDown(false);
    const afterwards = await statusesOf(provider.url, 1);
    provider.setDown(true);
    const downAgain = await statusesOf(provider.url, 1);

    // Assess
    expect(whileDown.status).toBe(503);
    expect(whileDown.headers.get('retry-after')).toBe('3');
    expect(afterwards).toEqual([200]);
    expect(downAgain).toEqual([503]);
  });

  it('answers 429 with Retry-After over its rate limit, until the next second', async () => {
    // Prepare: only the clock is faked, so that the window's second is fixed
    vi.useFakeTimers({ toFake: ['Date'], now: 1_000_000 });
    try {
      const provider = await start({ failureRate: 0, rateLimitPerSecond: 3 });
      // Act
      const within = await statusesOf(provider.url, 4);
      const over = await fetch(provider.url);
      await over.text();
      vi.setSystemTime(1_001_000);
      const next = await statusesOf(provider.url, 1);
      // Assess
      expect(within).toEqual([200, 200, 200, 429]);
      expect(over.status).toBe(429);
      expect(over.headers.get('retry-after')).toBe('1');
      expect(next).toEqual([200]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('never answers a random failure with 429 when a rate limit is set, and refuses a limit that is not a whole number above 0', async () => {
    // Prepare
    const provider = await start({ failureRate: 0.98, rateLimitPerSecond: 100_000, random: seededRandom(7) });
    // Act
    const statuses = await statusesOf(provider.url, 40);
    // Assess
    expect(statuses.filter((status) => status !== 200).length).toBeGreaterThan(30);
    expect(statuses).not.toContain(429);
    await expect(startFlakyProvider({ rateLimitPerSecond: 0 })).rejects.toThrow('Expected `rateLimitPerSecond` to be a whole number above 0, got 0');
  });

  it('changes its failure rate on the fly', async () => {
    // Prepare
    const provider = await start({ failureRate: 0 });

    // Act
    provider.setFailureRate(1);
    const statuses = await statusesOf(provider.url, 5);

    // Assess
    expect(statuses).not.toContain(200);
  });

  it.each([
    { label: 'a failureRate above 1', options: { failureRate: 1.5 } },
    { label: 'a negative permanentFailureRate', options: { permanentFailureRate: -0.1 } },
    { label: 'rates that add up to more than 1', options: { failureRate: 0.6, permanentFailureRate: 0.6 } },
  ])('refuses $label', async ({ options }) => {
    // Act
    const starting = startFlakyProvider(options);

    // Assess
    await expect(starting).rejects.toMatchObject({ name: 'ConfigError' });
  });

  it('refuses a failure rate out of range on the fly', async () => {
    // Prepare
    const provider = await start({ permanentFailureRate: 0.5, failureRate: 0 });

    // Act
    const change = () => provider.setFailureRate(0.6);

    // Assess
    expect(change).toThrow(expect.objectContaining({ name: 'ConfigError' }));
  });

  it('keeps stats by status and by id', async () => {
    // Prepare
    const provider = await start({ failureRate: 0 });

    // Act
    await statusesOf(`${provider.url}/hook?id=a&failTimes=1`, 3);
    await statusesOf(`${provider.url}/hook`, 1, { 'x-demo-id': 'b' });
    await statusesOf(`${provider.url}/hook?failTimes=1`, 1);

    // Assess
    expect(provider.stats()).toEqual({
      requests: 5,
      succeeded: 3,
      failed: 2,
      byStatus: { 200: 3, 400: 1, 503: 1 },
      distinctIdsSucceeded: 2,
    });
  });

  it('waits latencyMs before answering', async () => {
    // Prepare
    const provider = await start({ failureRate: 0, latencyMs: 150 });
    const startedMs = Date.now();

    // Act
    await statusesOf(provider.url, 1);

    // Assess
    expect(Date.now() - startedMs).toBeGreaterThanOrEqual(140);
  });

  it('closes at once despite a request in flight, then refuses connections', async () => {
    // Prepare: a request that would wait 5 s for its answer holds a socket open.
    const provider = await startFlakyProvider({ failureRate: 0, latencyMs: 5_000 });
    const pending = fetch(provider.url).catch((error: unknown) => error);
    await vi.waitFor(() => expect(provider.stats().requests, 'requests the provider got').toBe(1), { timeout: 2000, interval: 5 });
    const startedMs = Date.now();

    // Act
    await provider.close();

    // Assess
    expect(Date.now() - startedMs).toBeLessThan(1_000);
    expect(await pending).toBeInstanceOf(TypeError);
    await expect(fetch(provider.url)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
  });
});
