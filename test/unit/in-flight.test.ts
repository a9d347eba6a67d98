import { describe, expect, it } from 'vitest';
import { InFlight } from '../../shared/core/in-flight.js';

function deferred() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('InFlight', () => {
  it('counts pieces until each settles, a rejected one included', async () => {
    // Prepare
    const work = new InFlight();
    const [a, b] = [deferred(), deferred()];
    work.add(a.promise);
    work.add(b.promise);
    // Act
    const before = work.size;
    a.resolve();
    b.reject(new Error('handled by its maker'));
    await work.allFinished();
    // Assess
    expect(before).toBe(2);
    expect(work.size).toBe(0);
  });

  it('oneFinished resolves when any piece finishes, and at once with nothing in flight', async () => {
    // Prepare
    const work = new InFlight();
    const [a, b] = [deferred(), deferred()];
    work.add(a.promise);
    work.add(b.promise);
    let woke = false;
    const waiting = work.oneFinished().then(() => (woke = true));
    // Act
    await Promise.resolve();
    const beforeFinish = woke;
    b.resolve();
    await waiting;
    // Assess
    expect(beforeFinish).toBe(false);
    expect(work.size).toBe(1);
    await expect(new InFlight().oneFinished()).resolves.toBeUndefined();
  });

  it('allFinished also waits for pieces added while it waits', async () => {
    // Prepare
    const work = new InFlight();
    const [first, second] = [deferred(), deferred()];
    work.add(first.promise);
    let done = false;
    const all = work.allFinished().then(() => (done = true));
    // Act: the first piece adds a second as it finishes
    first.promise.then(() => work.add(second.promise));
    first.resolve();
    for (let i = 0; i < 5; i++) await Promise.resolve();
    const doneBeforeSecond = done;
    second.resolve();
    await all;
    // Assess
    expect(doneBeforeSecond).toBe(false);
    expect(work.size).toBe(0);
  });

  it('wakeOn ends the waits under way when its signal aborts; a later wait waits for a piece again', async () => {
    // Prepare
    const work = new InFlight();
    const piece = deferred();
    work.add(piece.promise);
    const stop = new AbortController();
    work.wakeOn(stop.signal);
    let woke = false;
    const waiting = work.oneFinished().then(() => (woke = true));
    await Promise.resolve();
    const beforeAbort = woke;
    // Act
    stop.abort();
    await waiting;
    let laterWoke = false;
    const later = work.oneFinished().then(() => (laterWoke = true));
    for (let i = 0; i < 5; i++) await Promise.resolve();
    const laterBeforeFinish = laterWoke;
    piece.resolve();
    await later;
    // Assess
    expect(beforeAbort).toBe(false);
    expect(woke).toBe(true);
    expect(laterBeforeFinish).toBe(false);
    expect(work.size).toBe(0);
  });
});
