import { describe, expect, it } from 'vitest';
import { type Gate, TurnLine } from '../../shared/core/turn-line.js';
import { FakeClock, settle } from '../helpers/fake-clock.js';
import { mostInWindow } from '../helpers/pace-windows.js';
import { seededRandom } from '../helpers/seeded-random.js';

/** The share gate: one start every `intervalMs`, counted from the last one the line let go. */
const every =
  (intervalMs: number): Gate =>
  (now, last) =>
    Math.max(0, last + intervalMs - now);

/** `count` starts asking at once; each records when it went (or that it left) and what it waited at the head. */
function ask(line: TurnLine, clock: FakeClock, count: number, signal = new AbortController().signal) {
  const went: { i: number; at: number; headMs: number | undefined }[] = [];
  for (let i = 0; i < count; i++) void line.turn(signal).then((headMs) => went.push({ i, at: clock.now(), headMs }));
  return went;
}

describe('TurnLine', () => {
  it.each([
    { intervalMs: 100, count: 5, expected: [0, 100, 200, 300, 400] },
    { intervalMs: 2000, count: 3, expected: [0, 2000, 4000] },
    { intervalMs: 0.1, count: 4, expected: [0, 1, 2, 3] },
  ])(
    'lets the first go at once, then one every $intervalMs ms (at least 1 ms: a timer waits that), in the order asked',
    async ({ intervalMs, count, expected }) => {
      // Prepare
      const clock = new FakeClock();
      const line = new TurnLine(every(intervalMs), clock);
      // Act
      const went = ask(line, clock, count);
      await clock.advance(10_000);
      // Assess
      expect(went.map((w) => w.at)).toEqual(expected);
      expect(went.map((w) => w.i)).toEqual([...expected.keys()]);
      expect(clock.pending).toBe(0);
    },
  );

  it('starts no burst after an event-loop stall: the head goes, the next a full interval later', async () => {
    // Prepare
    const clock = new FakeClock();
    const line = new TurnLine(every(100), clock);
    const went = ask(line, clock, 5);
    await clock.advance(0);
    // Act: the loop is blocked for a second; the timer due at 100 fires only then.
    clock.stall(1000);
    await clock.advance(0);
    const afterStall = went.length;
    await clock.advance(1000);
    // Assess
    expect(afterStall).toBe(2);
    expect(went.map((w) => w.at)).toEqual([0, 1000, 1100, 1200, 1300]);
  });

  it('never lets a start go early when its timer fires early: it asks the gate again', async () => {
    // Prepare: a clock whose timers fire 1 ms before their time.
    const clock = new FakeClock();
    const early = {
      now: () => clock.now(),
      setTimeout: (callback: () => void, ms: number) => clock.setTimeout(callback, ms - 1),
      clearTimeout: (h: unknown) => clock.clearTimeout(h),
    };
    const line = new TurnLine(every(100), early);
    // Act
    const went = ask(line, clock, 3);
    await clock.advance(1000);
    // Assess
    expect(went.map((w) => w.at)).toEqual([0, 100, 200]);
  });

  it('lets a start whose signal aborts leave the line, unstarted, and stops the timer once the line is empty', async () => {
    // Prepare
    const clock = new FakeClock();
    const line = new TurnLine(every(100), clock);
    const budget = new AbortController();
    const went = ask(line, clock, 4, budget.signal);
    await clock.advance(150);
    // Act
    budget.abort();
    await settle();
    // Assess
    expect(went).toEqual([
      { i: 0, at: 0, headMs: 0 },
      { i: 1, at: 100, headMs: 100 },
      { i: 2, at: 150, headMs: undefined },
      { i: 3, at: 150, headMs: undefined },
    ]);
    expect(line.length).toBe(0);
    expect(clock.pending).toBe(0);
    expect(await line.turn(budget.signal)).toBeUndefined();
  });

  it('keeps the others in line when the signal of some aborts', async () => {
    // Prepare
    const clock = new FakeClock();
    const line = new TurnLine(every(100), clock);
    const one = new AbortController();
    const leaving = ask(line, clock, 2, one.signal);
    const staying = ask(line, clock, 2);
    await clock.advance(50);
    // Act
    one.abort();
    await clock.advance(1000);
    // Assess
    expect(leaving.map((w) => w.headMs)).toEqual([0, undefined]);
    expect(staying.map((w) => w.at)).toEqual([100, 200]);
    expect(staying.map((w) => w.headMs)).toEqual([50, 100]);
  });

  it('asks a gate that answers later (a store) once at a time, and waits what it says before asking again', async () => {
    // Prepare: a store that lets a start go every 300 ms, and answers each ask later.
    const clock = new FakeClock();
    const asked: number[] = [];
    let next = 0;
    const store: Gate = async (now) => {
      asked.push(now);
      await new Promise((resolve) => setImmediate(resolve));
      if (now < next) return next - now;
      next = now + 300;
      return 0;
    };
    const line = new TurnLine(store, clock);
    // Act
    const went = ask(line, clock, 3);
    await clock.advance(1000);
    // Assess
    expect(went.map((w) => w.at)).toEqual([0, 300, 600]);
    expect(asked).toEqual([0, 0, 300, 300, 600]);
  });

  it('lets the head go when a gate breaks its word and rejects: a limit never stops the queue', async () => {
    // Prepare
    const clock = new FakeClock();
    const line = new TurnLine(() => Promise.reject(new Error('store down')), clock);
    // Act
    const went = ask(line, clock, 2);
    await clock.advance(0);
    // Assess
    expect(went.map((w) => w.i)).toEqual([0, 1]);
  });

  it('holds at most perSecond / shares + 1 starts per second per invocation, perSecond + shares for the queue, whatever the stalls', async () => {
    // Prepare: 20 a second shared by 2 invocations, each a line of its own; 60 s of random stalls.
    const clock = new FakeClock();
    const random = seededRandom(24);
    const lines = [new TurnLine(every(100), clock), new TurnLine(every(100), clock)];
    const starts: number[][] = [[], []];
    lines.forEach((line, n) => {
      // Each invocation keeps 8 starts waiting, as CONCURRENCY 8 would.
      const keep = (): void =>
        void line.turn(new AbortController().signal).then(() => {
          starts[n]?.push(clock.now());
          keep();
        });
      for (let i = 0; i < 8; i++) keep();
    });
    // Act
    while (clock.now() < 60_000) {
      if (random() < 0.2) clock.stall(Math.floor(random() * 700));
      await clock.advance(Math.floor(random() * 40));
    }
    // Assess
    const [first, second] = starts as [number[], number[]];
    expect(first.length).toBeGreaterThan(150);
    expect(mostInWindow(first, 1000)).toBeLessThanOrEqual(11);
    expect(mostInWindow(second, 1000)).toBeLessThanOrEqual(11);
    expect(mostInWindow([...first, ...second], 1000)).toBeLessThanOrEqual(22);
  });
});
