import { describe, expect, it } from 'vitest';
import { promotedBytes, resultAndTrace } from '../helpers/gc-trace.js';

const SCAVENGE = (promoted: number): string => `[7:0x1]  12 ms: pause=0.7 gc=s reduce_memory=0 allocated=1 promoted=${promoted} new_space_survived=0`;
const MARK = '[7:0x1]  20 ms: pause=3.1 gc=ms reduce_memory=0 promoted=999 ';

describe('reading a contestant process output (test/helpers/gc-trace.ts)', () => {
  it.each([
    ['the result last', [SCAVENGE(8), '{"ms":5}'], '{"ms":5}', 8],
    // --cpu-prof: V8 collects again while it writes the profile, after the result.
    ['a collection after the result', [SCAVENGE(8), '{"ms":5}', SCAVENGE(16)], '{"ms":5}', 24],
    ['no collection at all', ['{"ms":5}'], '{"ms":5}', 0],
    ['no result', [SCAVENGE(8)], undefined, 8],
  ])('%s', (_, lines, result, promoted) => {
    const split = resultAndTrace(`${lines.join('\n')}\n`);
    expect(split.result).toBe(result);
    expect(promotedBytes(split.traceLines)).toBe(promoted);
  });

  it('counts what scavenges promoted, not what mark-compacts report', () => {
    expect(promotedBytes([SCAVENGE(100), MARK, SCAVENGE(1)])).toBe(101);
  });
});
