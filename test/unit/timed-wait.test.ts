import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TimedWait } from '../../shared/amqp/timed-wait.js';

describe('TimedWait', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('ends a wait with what is handed, and says when nobody waited', async () => {
    // Prepare
    const next = new TimedWait<string>();
    // Act
    const nobody = next.hand('early');
    const waiting = next.wait(100);
    const handed = next.hand('m-1');
    // Assess
    expect(nobody).toBe(false);
    expect(handed).toBe(true);
    await expect(waiting).resolves.toBe('m-1');
  });

  it('ends a wait with undefined at its deadline, also when the timer was armed for an earlier wait', async () => {
    // Prepare: the first wait ends early (its timer stays armed for 100 ms), the second lasts 250 ms
    const next = new TimedWait<string>();
    const first = next.wait(100);
    next.hand('m-1');
    await first;
    const second = next.wait(250);
    let result: string | undefined | 'pending' = 'pending';
    void second.then((value) => {
      result = value;
    });
    // Act
    await vi.advanceTimersByTimeAsync(249);
    const before = result;
    await vi.advanceTimersByTimeAsync(1);
    // Assess
    expect(before).toBe('pending');
    expect(result).toBeUndefined();
  });

  it('re-arms for a wait shorter than the timer armed', async () => {
    // Prepare: a long wait ended early, then a short one
    const next = new TimedWait<string>();
    const long = next.wait(1000);
    next.hand('m-1');
    await long;
    const short = next.wait(10);
    // Act
    await vi.advanceTimersByTimeAsync(10);
    // Assess
    await expect(short).resolves.toBeUndefined();
  });

  it('ends the wait with undefined and leaves no timer at end()', async () => {
    // Prepare
    const next = new TimedWait<string>();
    const waiting = next.wait(1000);
    // Act
    next.end();
    // Assess
    await expect(waiting).resolves.toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });
});
