import { describe, expect, it } from 'vitest';
import { SequenceWindow } from '../../shared/sequence-window.js';

describe('SequenceWindow', () => {
  it.each<{ added: number[]; removed: number[]; lowest: number | undefined; open: number[] }>([
    { added: [1, 2, 3], removed: [1], lowest: 2, open: [2, 3] },
    { added: [1, 2, 3], removed: [2], lowest: 1, open: [1, 3] },
    { added: [1, 2, 3], removed: [2, 1], lowest: 3, open: [3] },
    { added: [1, 2, 3], removed: [3, 2, 1], lowest: undefined, open: [] },
    // A gap in the numbers (a tag never handed to the window) is closed from the start.
    { added: [5, 9], removed: [5], lowest: 9, open: [9] },
    { added: [5, 9], removed: [], lowest: 5, open: [5, 9] },
  ])('added $added, removed $removed: lowest open $lowest', ({ added, removed, lowest, open }) => {
    // Prepare
    const window = new SequenceWindow<string>();
    for (const n of added) window.add(n, `m${n}`);
    // Act
    const items = removed.map((n) => window.remove(n));
    // Assess
    expect(items).toEqual(removed.map((n) => `m${n}`));
    expect(window.lowest).toBe(lowest);
    expect(window.size).toBe(open.length);
    expect(window.openEntries()).toEqual(open.map((n) => [n, `m${n}`]));
    for (const n of added) expect(window.get(n)).toBe(open.includes(n) ? `m${n}` : undefined);
  });

  it('closes a number once, and knows nothing of numbers outside it', () => {
    // Prepare
    const window = new SequenceWindow<string>();
    window.add(1, 'a');
    window.add(2, 'b');
    // Act
    const first = window.remove(1);
    const again = window.remove(1);
    const unknown = [window.remove(0), window.remove(7), window.get(-3), window.get(99)];
    // Assess
    expect(first).toBe('a');
    expect(again).toBeUndefined();
    expect(unknown).toEqual([undefined, undefined, undefined, undefined]);
    expect(window.lowest).toBe(2);
  });

  it('starts again at the next number once empty, whatever came before', () => {
    // Prepare
    const window = new SequenceWindow<string>();
    window.add(1, 'a');
    window.remove(1);
    // Act
    window.add(40, 'b');
    window.add(41, 'c');
    window.remove(41);
    // Assess
    expect(window.lowest).toBe(40);
    expect(window.openEntries()).toEqual([[40, 'b']]);
  });
});
