import { describe, expect, it } from 'vitest';
import { HandlerSlots } from '../../shared/core/handler-slots.js';

/** What each `enter` promise has resolved with so far (undefined: still waiting). */
function watch(entries: Promise<boolean>[]): Array<boolean | undefined> {
  const seen: Array<boolean | undefined> = entries.map(() => undefined);
  entries.forEach((entry, i) => {
    void entry.then((entered) => {
      seen[i] = entered;
    });
  });
  return seen;
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('HandlerSlots', () => {
  it.each([
    { limit: 1, asked: 3, entered: [true, undefined, undefined] },
    { limit: 2, asked: 3, entered: [true, true, undefined] },
    { limit: 3, asked: 2, entered: [true, true] },
    { limit: 0, asked: 1, entered: [undefined] },
  ])('lets $limit of $asked calls in at once; the rest wait', async ({ limit, asked, entered }) => {
    // Prepare
    const slots = new HandlerSlots(() => limit, new AbortController().signal);
    // Act
    const seen = watch(Array.from({ length: asked }, () => slots.enter()));
    await settle();
    // Assess
    expect(seen).toEqual(entered);
  });

  it('lets the longest waiting call in when a slot is left, in the order they asked', async () => {
    // Prepare
    const slots = new HandlerSlots(() => 1, new AbortController().signal);
    const seen = watch([slots.enter(), slots.enter(), slots.enter()]);
    await settle();
    // Act
    slots.leave();
    await settle();
    // Assess
    expect(seen).toEqual([true, true, undefined]);
  });

  it('follows a limit that changes (the breaker): a raised limit lets as many in as it allows at the next leave', async () => {
    // Prepare
    let limit = 1;
    const slots = new HandlerSlots(() => limit, new AbortController().signal);
    const seen = watch([slots.enter(), slots.enter(), slots.enter(), slots.enter()]);
    await settle();
    // Act
    limit = 3;
    slots.leave();
    await settle();
    // Assess
    expect(seen).toEqual([true, true, true, true]);
  });

  it('turns the waiting calls away, and every later one, once the line is left', async () => {
    // Prepare
    const leave = new AbortController();
    const slots = new HandlerSlots(() => 1, leave.signal);
    const seen = watch([slots.enter(), slots.enter()]);
    await settle();
    // Act
    leave.abort();
    const later = await slots.enter();
    await settle();
    // Assess
    expect(seen).toEqual([true, false]);
    expect(later).toBe(false);
  });

  it('keeps a call that arrives while others wait behind them, though a slot is free for a moment', async () => {
    // Prepare: a leave frees a slot that the head of the line takes at once
    const slots = new HandlerSlots(() => 1, new AbortController().signal);
    const seen = watch([slots.enter(), slots.enter()]);
    await settle();
    slots.leave();
    // Act
    const [last] = watch([slots.enter()]);
    await settle();
    // Assess
    expect(seen).toEqual([true, true]);
    expect(last).toBeUndefined();
  });
});
