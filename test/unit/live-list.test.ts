import { describe, expect, it } from 'vitest';
import { LiveList } from '../../shared/live-list.js';

type Item = { index: number; readonly name: string };

const item = (name: string): Item => ({ index: -1, name });
const names = (items: readonly Item[]): string[] => items.map((i) => i.name).sort();

describe('LiveList', () => {
  it.each([
    { removed: ['a'], left: ['b', 'c', 'd'] },
    { removed: ['d'], left: ['a', 'b', 'c'] },
    { removed: ['b', 'c'], left: ['a', 'd'] },
    { removed: ['a', 'b', 'c', 'd'], left: [] },
  ])('keeps the others, each knowing its index, after removing $removed', ({ removed, left }) => {
    // Prepare
    const list = new LiveList<Item>();
    const all = ['a', 'b', 'c', 'd'].map(item);
    for (const i of all) list.add(i);
    // Act
    for (const name of removed) list.remove(all.find((i) => i.name === name) as Item);
    // Assess: `has` holds only where the record's index still points at it
    for (const i of all) expect(list.has(i)).toBe(left.includes(i.name));
    expect(list.size).toBe(left.length);
    expect(names(list.drain())).toEqual(left);
  });

  it('removes a record once: the second time, and for a record of another list, it says false', () => {
    // Prepare
    const list = new LiveList<Item>();
    const other = new LiveList<Item>();
    const [a, b] = [item('a'), item('b')];
    list.add(a);
    other.add(b);
    // Act
    const first = list.remove(a);
    const second = list.remove(a);
    const foreign = list.remove(b);
    // Assess
    expect([first, second, foreign]).toEqual([true, false, false]);
    expect(a.index).toBe(-1);
    expect(other.has(b)).toBe(true);
  });

  it('drains every record, leaving each in no list, and finds by a predicate', () => {
    // Prepare
    const list = new LiveList<Item>();
    const all = ['a', 'b', 'c'].map(item);
    for (const i of all) list.add(i);
    // Act
    const found = list.find((i) => i.name === 'b');
    const drained = list.drain();
    // Assess
    expect(found?.name).toBe('b');
    expect(names(drained)).toEqual(['a', 'b', 'c']);
    expect(list.size).toBe(0);
    expect(all.every((i) => i.index === -1 && !list.has(i))).toBe(true);
    expect(list.find(() => true)).toBeUndefined();
  });
});
