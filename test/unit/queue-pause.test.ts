import { describe, expect, it } from 'vitest';
import { QueuePause, type PauseStart } from '../../shared/core/queue-pause.js';
import { Tally } from '../../shared/core/tally.js';
import { emptySummary } from '../../shared/observability/summary.js';

const NOW = Date.parse('2026-05-01T12:00:00.000Z');
const start = (untilMs: number): PauseStart => ({ untilMs, queue: 'orders', errorName: 'E', messageId: undefined });

describe('QueuePause', () => {
  it.each([
    ['no pause', undefined, NOW, false, 0],
    ['a marker ahead', NOW + 5000, NOW, true, 5000],
    ['a marker just over', NOW, NOW, false, 0],
    ['a marker long past', NOW - 5000, NOW, false, 0],
  ])('%s: holds %s', (_name, pausedUntil, now, holds, remainingMs) => {
    const pause = new QueuePause({ pausedUntil, tally: new Tally() });
    expect(pause.holds(now)).toBe(holds);
    expect(pause.remainingMs(now)).toBe(remainingMs);
  });

  it('is extended by a later pause, never shortened, and tells the mode each time it grows', () => {
    // Prepare
    const told: number[] = [];
    const tally = new Tally();
    const pause = new QueuePause({ pausedUntil: NOW + 1000, tally, onPause: (p) => told.push(p.untilMs) });
    // Act
    pause.ask(start(NOW + 500));
    pause.ask(start(NOW + 3000));
    pause.ask(start(NOW + 2000));
    // Assess
    expect(pause.until).toBe(NOW + 3000);
    expect(told).toEqual([NOW + 3000]);
    expect(tally.current.pausedUntil).toBe('2026-05-01T12:00:03.000Z');
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
