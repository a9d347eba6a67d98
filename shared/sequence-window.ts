/**
 * The open items of a numbered sequence (a channel's delivery tags, a publisher's copy numbers), in
 * number order: added in increasing numbers, removed by number in any order, the lowest open one
 * at hand. It is an array from the lowest open number up, so it keeps no hash table: a `Map` or `Set`
 * that churns an entry per message falls into V8's chain of rehashed tables and promotes every
 * message to the old generation (shared/live-list.ts says how). A removed item's entry is cleared at
 * once; the array's head moves past removed items, so an item that stays open holds the entries
 * after it (one word each) until it is removed.
 * @example
 * const open = new SequenceWindow<string>();
 * open.add(1, 'a'); open.add(2, 'b');
 * open.remove(1); // 'a'
 * open.lowest; // 2
 */
class SequenceWindow<T> {
  private entries: Array<T | undefined> = [];
  /** The number of `entries[0]`. */
  private first = 0;
  private count = 0;

  /** Items open. */
  public get size(): number {
    return this.count;
  }

  /** The lowest number still open, or undefined when none is. */
  public get lowest(): number | undefined {
    return this.count === 0 ? undefined : this.first;
  }

  /** Opens `item` as `number`, which must be above every number added before. */
  public add(number: number, item: T): void {
    // Empty, the array is too (its head moved past every removed entry): it starts at this number.
    if (this.count === 0) this.first = number;
    // Numbers skipped (a gap in the sequence) are entries already closed.
    while (this.first + this.entries.length < number) this.entries.push(undefined);
    this.entries.push(item);
    this.count++;
  }

  /** The open item numbered `number`, or undefined. */
  public get(number: number): T | undefined {
    const at = number - this.first;
    return at >= 0 && at < this.entries.length ? this.entries[at] : undefined;
  }

  /** Closes `number` and returns its item; undefined when it was not open. */
  public remove(number: number): T | undefined {
    const item = this.get(number);
    if (item === undefined) return undefined;
    this.entries[number - this.first] = undefined;
    this.count--;
    while (this.entries.length > 0 && this.entries[0] === undefined) {
      this.entries.shift();
      this.first++;
    }
    return item;
  }

  /** The open items with their numbers, lowest first (a copy: the window may change while the caller walks it). */
  public openEntries(): Array<[number, T]> {
    const open: Array<[number, T]> = [];
    this.entries.forEach((item, at) => {
      if (item !== undefined) open.push([this.first + at, item]);
    });
    return open;
  }
}

export { SequenceWindow };
