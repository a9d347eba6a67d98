import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgress } from '../../shared/parked/progress.js';
import type { WalkCounts } from '../../shared/parked/walk.js';

/** A stream that is not a terminal (a pipe, a file), keeping what was written. */
function pipe(): NodeJS.WriteStream & { text(): string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return Object.assign(stream, { isTTY: false, text: () => chunks.join('') }) as unknown as NodeJS.WriteStream & { text(): string };
}

const counts = (visited: number): WalkCounts => ({ total: 10, visited, kept: visited, moved: 0, deleted: 0, notMoved: 0 });

describe('createProgress without a terminal', () => {
  it('prints result lines to stdout and the report as plain lines on stderr', () => {
    // Prepare
    const stdout = pipe();
    const stderr = pipe();
    const progress = createProgress({ label: 'list', details: (c) => `${c.kept} kept`, stdout, stderr, plainEveryMs: 0 });
    // Act
    progress.print('row 1');
    progress.update(counts(5));
    progress.print('row 2');
    progress.stop(counts(10));
    // Assess
    expect(stdout.text()).toBe('row 1\nrow 2\n');
    const reports = stderr.text().trim().split('\n');
    expect(reports).toHaveLength(2);
    expect(reports[0]).toMatch(/^list: 5\/10 read · 5 kept · \d+ msg\/s$/);
    expect(reports[1]).toMatch(/^list: 10\/10 read · 10 kept · \d+ msg\/s$/);
  });

  it('writes at most one report line per interval', () => {
    // Prepare
    const stderr = pipe();
    const progress = createProgress({ label: 'replay', details: () => '', stdout: pipe(), stderr, plainEveryMs: 60_000 });
    // Act
    for (let i = 1; i <= 10; i++) progress.update(counts(i));
    // Assess
    expect(stderr.text()).toBe('');
  });
});
