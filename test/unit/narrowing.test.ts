import { describe, expect, it } from 'vitest';
import { narrowingOf } from '../../shared/core/take-loop.js';
import type { Transport } from '../../shared/core/transport.js';
import type { ModeSettings } from '../../shared/core/mode-settings.js';

const COUNTING: ModeSettings = { copyLimitBytes: undefined, canDefer: true, giveBackCounts: true, givesBackAsIs: false, defersByCopy: true };
const FREE: ModeSettings = { ...COUNTING, giveBackCounts: false, givesBackAsIs: true };

/** The part of a transport the narrowing reads, and the prefetches it was told. */
function transportWith(settings: ModeSettings, canNarrow = true): { transport: Transport; narrowed: number[] } {
  const narrowed: number[] = [];
  const transport = { settings, ...(canNarrow ? { narrow: (prefetch: number) => void narrowed.push(prefetch) } : {}) } as unknown as Transport;
  return { transport, narrowed };
}

const CONFIG = { batchSize: 100, concurrency: 4 };

describe('narrowingOf', () => {
  it.each([
    { name: 'a give-back that counts nothing (4.3, native)', settings: FREE, canNarrow: true, config: CONFIG },
    { name: 'a transport that cannot narrow (event)', settings: COUNTING, canNarrow: false, config: CONFIG },
    { name: 'CONCURRENCY at BATCH_SIZE', settings: COUNTING, canNarrow: true, config: { batchSize: 8, concurrency: 8 } },
  ])('does nothing for $name', ({ settings, canNarrow, config }) => {
    expect(narrowingOf(transportWith(settings, canNarrow).transport, config)).toBeUndefined();
  });

  // Started at 0: 200 attempts finished by 1000 ms is 5 ms a message, 500 ms for a full prefetch of 100.
  it.each([
    { now: 1000, untilStop: 1001, finished: 200, narrowed: [] },
    { now: 1000, untilStop: 1000, finished: 200, narrowed: [4] },
    { now: 1000, untilStop: 10, finished: 3, narrowed: [] },
    { now: 1000, untilStop: 10, finished: 4, narrowed: [4] },
    { now: 2000, untilStop: 3000, finished: 100, narrowed: [4] },
  ])('at $now ms with $untilStop ms left and $finished finished, narrows to $narrowed', ({ now, untilStop, finished, narrowed }) => {
    // Prepare
    const made = transportWith(COUNTING);
    const narrowing = narrowingOf(made.transport, CONFIG);
    // Act
    narrowing?.check(0, 10_000, 0);
    narrowing?.check(now, untilStop, finished);
    // Assess
    expect(made.narrowed).toEqual(narrowed);
  });

  it('narrows once', () => {
    // Prepare
    const made = transportWith(COUNTING);
    const narrowing = narrowingOf(made.transport, CONFIG);
    // Act
    narrowing?.check(0, 10_000, 0);
    for (const now of [1000, 1100, 1200]) narrowing?.check(now, 10, 200);
    // Assess
    expect(made.narrowed).toEqual([4]);
  });
});
