import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { GuardedOutput, isClosedPipe } from '../../shared/observability/guarded-output.js';

/** A pipe whose reader is gone after `accepted` writes: the next write fails with EPIPE, as a real pipe does. */
function pipeClosingAfter(accepted: number): Writable & { received: string[] } {
  const received: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (received.length >= accepted) return done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      received.push(chunk.toString());
      done();
    },
  });
  return Object.assign(stream, { received });
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('GuardedOutput', () => {
  it('drops writes once the reader went away, and says so once', async () => {
    // Prepare
    const stream = pipeClosingAfter(1);
    const output = GuardedOutput.of(stream);
    let closings = 0;
    output.onClose(() => closings++);
    // Act
    output.write('row 1\n');
    output.write('row 2\n');
    await tick();
    output.write('row 3\n');
    await tick();
    // Assess
    expect(stream.received).toEqual(['row 1\n']);
    expect(output.closed).toBe(true);
    expect(closings).toBe(1);
  });

  it('is one guard per stream', () => {
    const stream = pipeClosingAfter(0);
    expect(GuardedOutput.of(stream)).toBe(GuardedOutput.of(stream));
    expect(stream.listenerCount('error')).toBe(1);
  });

  it('lets any other stream error through', () => {
    const stream = pipeClosingAfter(0);
    GuardedOutput.of(stream);
    expect(() => stream.emit('error', Object.assign(new Error('disk full'), { code: 'ENOSPC' }))).toThrow('disk full');
  });

  it.each([
    [{ code: 'EPIPE' }, true],
    [{ code: 'ERR_STREAM_DESTROYED' }, true],
    [{ code: 'ENOSPC' }, false],
    [new Error('no code'), false],
    [undefined, false],
  ])('isClosedPipe(%j) is %s', (error, expected) => {
    expect(isClosedPipe(error)).toBe(expected);
  });
});
