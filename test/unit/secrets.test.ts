import { describe, expect, it } from 'vitest';
import { SecretCache, type SecretSource } from '../../shared/amqp/secrets.js';

/** A source that answers from a script of values (a value may be an Error to throw) and counts its calls. */
function scriptedSource(values: (string | Error)[]): { source: SecretSource; calls: string[] } {
  const calls: string[] = [];
  const source: SecretSource = async (secretId) => {
    calls.push(secretId);
    const value = values.shift() ?? 'last';
    if (value instanceof Error) throw value;
    return value;
  };
  return { source, calls };
}

/** A clock the test moves. */
function fakeClock(startMs = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let nowMs = startMs;
  return { now: () => nowMs, advance: (ms) => { nowMs += ms; } };
}

describe('SecretCache', () => {
  it('fetches once and reuses the value while it is younger than maxAgeSeconds', async () => {
    // Prepare
    const { source, calls } = scriptedSource(['v1', 'v2']);
    const clock = fakeClock();
    const cache = new SecretCache(source, { maxAgeSeconds: 300, now: clock.now });
    // Act
    const first = await cache.get('broker');
    clock.advance(299_999);
    const second = await cache.get('broker');
    // Assess
    expect([first, second]).toEqual(['v1', 'v1']);
    expect(calls).toEqual(['broker']);
  });

  it('fetches again once the value is maxAgeSeconds old', async () => {
    // Prepare
    const { source, calls } = scriptedSource(['v1', 'v2']);
    const clock = fakeClock();
    const cache = new SecretCache(source, { maxAgeSeconds: 300, now: clock.now });
    await cache.get('broker');
    // Act
    clock.advance(300_000);
    const value = await cache.get('broker');
    // Assess
    expect(value).toBe('v2');
    expect(calls).toHaveLength(2);
  });

  it('fetches again at once when asked to refresh (the broker refused the cached password)', async () => {
    // Prepare
    const { source } = scriptedSource(['old', 'rotated']);
    const cache = new SecretCache(source);
    await cache.get('broker');
    // Act
    const refreshed = await cache.get('broker', { refresh: true });
    const after = await cache.get('broker');
    // Assess
    expect([refreshed, after]).toEqual(['rotated', 'rotated']);
  });

  it('shares one fetch between concurrent reads', async () => {
    // Prepare
    const { source, calls } = scriptedSource(['v1']);
    const cache = new SecretCache(source);
    // Act
    const values = await Promise.all([cache.get('broker'), cache.get('broker'), cache.get('broker')]);
    // Assess
    expect(values).toEqual(['v1', 'v1', 'v1']);
    expect(calls).toHaveLength(1);
  });

  it('does not cache a failed fetch', async () => {
    // Prepare
    const { source, calls } = scriptedSource([new Error('throttled'), 'v1']);
    const cache = new SecretCache(source);
    // Act
    const failed = cache.get('broker');
    await expect(failed).rejects.toThrow('throttled');
    const value = await cache.get('broker');
    // Assess
    expect(value).toBe('v1');
    expect(calls).toHaveLength(2);
  });

  it('keeps one entry per secret id', async () => {
    // Prepare
    const { source, calls } = scriptedSource(['a', 'b']);
    const cache = new SecretCache(source);
    // Act
    const values = [await cache.get('one'), await cache.get('two'), await cache.get('one')];
    // Assess
    expect(values).toEqual(['a', 'b', 'a']);
    expect(calls).toEqual(['one', 'two']);
  });

  it('with maxAgeSeconds 0 never reuses a value', async () => {
    // Prepare
    const { source, calls } = scriptedSource(['v1', 'v2']);
    const cache = new SecretCache(source, { maxAgeSeconds: 0 });
    // Act
    await cache.get('broker');
    await cache.get('broker');
    // Assess
    expect(calls).toHaveLength(2);
  });

  it.each([-1, Number.NaN])('rejects maxAgeSeconds %s', (maxAgeSeconds) => {
    // Act & Assess
    expect(() => new SecretCache(async () => 'x', { maxAgeSeconds })).toThrow(`Expected \`maxAgeSeconds\` to be a non-negative number, got ${maxAgeSeconds}`);
  });
});
