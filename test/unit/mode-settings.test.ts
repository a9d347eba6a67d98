import { describe, expect, it } from 'vitest';
import { eventSettings, nativeSettings, pullSettings } from '../../shared/core/mode-settings.js';

const TIERS = { delayMode: 'tiers', tierDelaysMs: [1000] } as const;

describe('mode settings', () => {
  it.each([
    { mode: 'pull on 3.10', settings: pullSettings({ maxMessageBytes: 100 }, TIERS, { major: 3, minor: 10 }), counts: undefined },
    { mode: 'pull on 4.3', settings: pullSettings({ maxMessageBytes: 100 }, TIERS, { major: 4, minor: 3 }), counts: undefined },
    { mode: 'native', settings: nativeSettings('x-opt-own-returns'), counts: undefined },
    { mode: 'event', settings: eventSettings(TIERS), counts: true },
  ])('$mode: the crash-loop guard counts x-acquired-count: $counts', ({ settings, counts }) => {
    // Assess: only the mode that never gives a delivery back itself counts every acquisition.
    expect(settings.countsAcquired).toBe(counts);
  });

  it.each([
    { broker: { major: 3, minor: 10 }, counts: true },
    { broker: { major: 4, minor: 2 }, counts: true },
    { broker: { major: 4, minor: 3 }, counts: false },
    { broker: undefined, counts: true },
  ])('pull on $broker: a give-back counts toward the crash-loop limit: $counts', ({ broker, counts }) => {
    // Act
    const settings = pullSettings({ maxMessageBytes: 100 }, TIERS, broker);
    // Assess
    expect(settings.giveBackCounts).toBe(counts);
  });
});
