import { describe, expect, it } from 'vitest';
import type { PauseMark, PauseMarker } from '../../shared/amqp/pause-marker.js';
import { PauseMarking, readPause } from '../../shared/core/pause-marking.js';
import { recordingLogger } from '../helpers/fakes.js';

/** A marker that records each write and answers reads and writes as scripted. */
class FakeMarker implements PauseMarker {
  public readonly writes: PauseMark[] = [];
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

  public async write(mark: PauseMark): Promise<void> {
    this.writes.push(mark);
    await this.gate;
    this.gate = undefined;
    if (this.answers.write !== undefined) throw this.answers.write;
  }
}

const start = (untilMs: number, queue = 'orders') => ({ untilMs, queue, errorName: 'PartnerRateLimitedError', messageId: 'm-1' });

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

describe('PauseMarking', () => {
  it('writes one marker at a time: pauses asked while one is written end in one more write, the latest', async () => {
    // Prepare
    const marker = new FakeMarker('orders.pause', { hold: true });
    const marking = new PauseMarking(() => marker, recordingLogger().log, 'orders-pull');
    // Act: three handlers answered at once
    marking.started(start(1000));
    marking.started(start(2000));
    marking.started(start(3000));
    marker.release();
    await marking.written(1000);
    // Assess
    expect(marker.writes).toEqual([
      { untilMs: 1000, reason: 'PartnerRateLimitedError', by: 'orders-pull' },
      { untilMs: 3000, reason: 'PartnerRateLimitedError', by: 'orders-pull' },
    ]);
  });

  it("writes each queue's marker (event mode: a batch names its queues)", async () => {
    // Prepare
    const markers = new Map([
      ['a', new FakeMarker('a.pause')],
      ['b', new FakeMarker('b.pause')],
    ]);
    const marking = new PauseMarking((queue) => markers.get(queue)!, recordingLogger().log, 'f');
    // Act
    marking.started(start(1000, 'a'));
    marking.started(start(2000, 'b'));
    await marking.written(1000);
    // Assess
    expect(markers.get('a')!.writes.map((w) => w.untilMs)).toEqual([1000]);
    expect(markers.get('b')!.writes.map((w) => w.untilMs)).toEqual([2000]);
  });

  it('says when a marker cannot be written, and fails nothing', async () => {
    // Prepare
    const logger = recordingLogger();
    const marking = new PauseMarking(() => new FakeMarker('orders.pause', { write: new Error('PRECONDITION_FAILED') }), logger.log, 'f');
    // Act
    marking.started(start(Date.parse('2026-05-01T12:00:00Z')));
    await marking.written(1000);
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
    const marking = new PauseMarking(() => new FakeMarker('orders.pause', { hold: true }), recordingLogger().log, 'f');
    marking.started(start(1000));
    const before = Date.now();
    // Act
    await marking.written(30);
    // Assess
    expect(Date.now() - before).toBeLessThan(500);
  });

  it('returns at once when nothing was asked', async () => {
    await new PauseMarking(() => new FakeMarker('q'), recordingLogger().log, 'f').written(10_000);
  });
});
