import { describe, expect, it } from 'vitest';
import type { PauseMarker, PauseStart } from '../../shared/amqp/pause-marker.js';
import { Pause, readPause } from '../../shared/core/pause.js';
import { Tally } from '../../shared/core/tally.js';
import { emptySummary } from '../../shared/observability/summary.js';
import { recordingLogger } from '../helpers/fakes.js';

const NOW = Date.parse('2026-05-01T12:00:00.000Z');

/** A marker that records each write and answers reads and writes as scripted. */
class FakeMarker implements PauseMarker {
  public readonly writes: Array<{ untilMs: number; errorName: string; by: string }> = [];
  public release: () => void = () => undefined;
  private gate: Promise<void> | undefined;

  public constructor(
    public readonly queue: string,
    private readonly answers: { read?: number | Error; write?: Error; hold?: boolean } = {},
  ) {
    if (answers.hold === true)
      this.gate = new Promise((resolve) => {
        this.release = resolve;
      });
  }

  public async read(): Promise<number | undefined> {
    if (this.answers.read instanceof Error) throw this.answers.read;
    return this.answers.read;
  }

  public async write(pause: PauseStart, by: string): Promise<void> {
    this.writes.push({ untilMs: pause.untilMs, errorName: pause.errorName, by });
    await this.gate;
    this.gate = undefined;
    if (this.answers.write !== undefined) throw this.answers.write;
  }
}

const start = (untilMs: number, queue = 'orders'): PauseStart => ({ untilMs, queue, errorName: 'PartnerRateLimitedError', messageId: 'm-1' });

/** A pause marked through `markerOf`, as the invocation builds it. */
const markedPause = (markerOf: (queue: string) => PauseMarker, log = recordingLogger().log, by = 'orders-pull') =>
  new Pause({ markerOf, by, log, tally: new Tally() });

describe('Pause', () => {
  it.each([
    ['no pause', undefined, NOW, false, 0],
    ['a marker ahead', NOW + 5000, NOW, true, 5000],
    ['a marker just over', NOW, NOW, false, 0],
    ['a marker long past', NOW - 5000, NOW, false, 0],
  ])('%s: holds %s', (_name, pausedUntil, now, holds, remainingMs) => {
    const pause = new Pause({ pausedUntil, log: recordingLogger().log, tally: new Tally() });
    expect(pause.holds(now)).toBe(holds);
    expect(pause.remainingMs(now)).toBe(remainingMs);
  });

  it('is extended by a later pause, never shortened, and marked each time it grows', async () => {
    // Prepare
    const marker = new FakeMarker('orders.pause');
    const tally = new Tally();
    const pause = new Pause({ pausedUntil: NOW + 1000, markerOf: () => marker, by: 'f', log: recordingLogger().log, tally });
    // Act
    pause.ask(start(NOW + 500));
    pause.ask(start(NOW + 3000));
    pause.ask(start(NOW + 2000));
    await pause.written(1000);
    // Assess
    expect(pause.until).toBe(NOW + 3000);
    expect(marker.writes.map((w) => w.untilMs)).toEqual([NOW + 3000]);
    expect(tally.current.pausedUntil).toBe('2026-05-01T12:00:03.000Z');
  });

  it('writes one marker at a time: pauses asked while one is written end in one more write, the latest', async () => {
    // Prepare
    const marker = new FakeMarker('orders.pause', { hold: true });
    const pause = markedPause(() => marker);
    // Act: three handlers answered at once
    pause.ask(start(1000));
    pause.ask(start(2000));
    pause.ask(start(3000));
    marker.release();
    await pause.written(1000);
    // Assess
    expect(marker.writes).toEqual([
      { untilMs: 1000, errorName: 'PartnerRateLimitedError', by: 'orders-pull' },
      { untilMs: 3000, errorName: 'PartnerRateLimitedError', by: 'orders-pull' },
    ]);
  });

  it("writes each queue's marker (event mode: a batch names its queues)", async () => {
    // Prepare
    const markers = new Map([
      ['a', new FakeMarker('a.pause')],
      ['b', new FakeMarker('b.pause')],
    ]);
    const pause = markedPause((queue) => markers.get(queue) as FakeMarker);
    // Act
    pause.ask(start(1000, 'a'));
    pause.ask(start(2000, 'b'));
    await pause.written(1000);
    // Assess
    expect(markers.get('a')?.writes.map((w) => w.untilMs)).toEqual([1000]);
    expect(markers.get('b')?.writes.map((w) => w.untilMs)).toEqual([2000]);
  });

  it('says when a marker cannot be written, and fails nothing', async () => {
    // Prepare
    const logger = recordingLogger();
    const pause = markedPause(() => new FakeMarker('orders.pause', { write: new Error('PRECONDITION_FAILED') }), logger.log);
    // Act
    pause.ask(start(Date.parse('2026-05-01T12:00:00Z')));
    await pause.written(1000);
    // Assess
    expect(logger.entries()).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: 'could not write the pause marker: the pause holds for this invocation only',
        markerQueue: 'orders.pause',
        pausedUntil: '2026-05-01T12:00:00.000Z',
        reason: 'PRECONDITION_FAILED',
      }),
    ]);
  });

  it('waits no longer than asked for a write that hangs', async () => {
    // Prepare
    const pause = markedPause(() => new FakeMarker('orders.pause', { hold: true }));
    pause.ask(start(1000));
    const before = Date.now();
    // Act
    await pause.written(30);
    // Assess
    expect(Date.now() - before).toBeLessThan(500);
  });

  it('returns at once when nothing was asked, and marks nothing without a marker', async () => {
    const pause = new Pause({ log: recordingLogger().log, tally: new Tally() });
    pause.ask(start(NOW + 1000));
    await pause.written(10_000);
    expect(pause.until).toBe(NOW + 1000);
  });
});

describe('readPause', () => {
  it('answers what the marker says', async () => {
    expect(await readPause(new FakeMarker('orders.pause', { read: 42 }), recordingLogger().log)).toBe(42);
    expect(await readPause(new FakeMarker('orders.pause'), recordingLogger().log)).toBeUndefined();
  });

  it('takes a marker it cannot read as no pause, and says so', async () => {
    // Prepare
    const logger = recordingLogger();
    // Act
    const until = await readPause(new FakeMarker('orders.pause', { read: new Error('ACCESS_REFUSED') }), logger.log);
    // Assess
    expect(until).toBeUndefined();
    expect(logger.entries()).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: 'could not read the pause marker; taken as not paused',
        markerQueue: 'orders.pause',
        reason: 'ACCESS_REFUSED',
      }),
    ]);
  });
});

describe('the summary of a paused invocation', () => {
  it('has no pausedUntil unless paused, and keeps the latest time it was told', () => {
    // Prepare
    const tally = new Tally();
    // Act, Assess
    expect(emptySummary()).not.toHaveProperty('pausedUntil');
    tally.paused(NOW + 2000);
    tally.paused(NOW + 1000);
    tally.stop('paused');
    expect(tally.finish(NOW)).toMatchObject({ pausedUntil: '2026-05-01T12:00:02.000Z', stoppedBecause: 'paused' });
  });
});
