import { describe, expect, it } from 'vitest';
import { addCounts, replayResultFromJson, replayResultToJson, tallyFromJson, tallyToJson, type WalkReport } from '../../shared/parked/operator-protocol.js';
import type { ReplayResult, ReplayTally } from '../../shared/parked/replay.js';

describe('addCounts', () => {
  it('starts with the first slice as it is', () => {
    const first = { total: 10, visited: 4, kept: 0, moved: 4, deleted: 0, notMoved: 0 };
    expect(addCounts(undefined, first)).toEqual(first);
  });

  it("adds a slice to those before it: the lot's count is the first slice's, kept is the last's", () => {
    // Prepare: the first slice moved 4 of 10 and stopped holding nothing; the second walks the 6 left
    const before = { total: 10, visited: 4, kept: 0, moved: 4, deleted: 0, notMoved: 0 };
    const slice = { total: 6, visited: 6, kept: 2, moved: 3, deleted: 0, notMoved: 1 };
    // Act
    const counts = addCounts(before, slice);
    // Assess
    expect(counts).toEqual({ total: 10, visited: 10, kept: 2, moved: 7, deleted: 0, notMoved: 1 });
  });
});

describe('replay tally and result as JSON', () => {
  it('carries a tally across a slice unchanged (maps as entries)', () => {
    // Prepare
    const tally: ReplayTally = {
      selected: 5,
      noSource: 1,
      sent: new Map([['orders', 3]]),
      unroutable: new Map([['gone', 1]]),
      refused: [{ messageId: 'm-9', claimed: 'billing', reason: 'not the work queue' }],
      unsendable: [{ messageId: undefined, reason: 'headers over 64 KiB' }],
    };
    // Act
    const back = tallyFromJson(JSON.parse(JSON.stringify(tallyToJson(tally))));
    // Assess
    expect(back).toEqual(tally);
  });

  it('rebuilds the result the direct command returns, counts from the report', () => {
    // Prepare
    const result: ReplayResult = {
      total: 6,
      visited: 6,
      kept: 1,
      moved: 5,
      deleted: 0,
      notMoved: 0,
      ending: 'done',
      selected: 6,
      noSource: 1,
      byQueue: new Map([['orders', 5]]),
      unroutable: new Map(),
      refused: [],
      unsendable: [],
    };
    const report: WalkReport = {
      label: 'replay',
      counts: { total: 6, visited: 6, kept: 1, moved: 5, deleted: 0, notMoved: 0 },
      details: '5 replayed · 0 unroutable',
      ending: 'done',
    };
    // Act
    const back = replayResultFromJson(JSON.parse(JSON.stringify(replayResultToJson(result))), report);
    // Assess
    expect(back).toEqual(result);
  });
});
