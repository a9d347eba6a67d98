import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { promotedBytes } from '../helpers/gc-trace.js';

const CHURN = fileURLToPath(new URL('../fixtures/work-in-hand-churn.ts', import.meta.url));

/** The bytes V8's scavenges promoted to the old generation in a churn run over `kind`. */
function promotedBytesOf(kind: string): number {
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--expose-gc', '--trace-gc-nvp', CHURN, kind], { encoding: 'utf8', timeout: 60_000 });
  if (run.status !== 0) throw new Error(`churn ${kind} failed: ${run.stderr}`);
  return promotedBytes(run.stdout.split('\n'));
}

describe('work in hand kept without a hash table (shared/live-list.ts)', () => {
  // The control: once a Map's table is promoted, each table it rehashes into is kept alive by the one
  // before, and every record with it: the run promotes hundreds of MB. Should a future V8 drop that
  // link, this line fails and the lists may go back to being maps.
  it('a churned Map promotes what it held at every scavenge, once one of its tables was promoted', () => {
    expect(promotedBytesOf('map')).toBeGreaterThan(50 * 1024 * 1024);
  });

  it.each(['live-list', 'sequence-window'])('a churned %s promotes no more than the program itself', (kind) => {
    // What the loader and the program promote anyway is under 2 MB.
    expect(promotedBytesOf(kind)).toBeLessThan(5 * 1024 * 1024);
  });
});
