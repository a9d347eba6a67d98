import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseCli } from '../../shared/cli/args.js';

const OPTIONS = { 'parking-queue': { type: 'string' }, json: { type: 'boolean' } } as const;
const RENAMED = { queue: 'parking-queue' };

describe('parseCli with a renamed flag', () => {
  afterEach(() => vi.restoreAllMocks());

  it.each([
    ['the new name', ['--parking-queue', 'orders.parked'], 'orders.parked', false],
    ['the old name, as two words', ['--queue', 'orders.parked'], 'orders.parked', true],
    ['the old name, with =', ['--queue=orders.parked', '--json'], 'orders.parked', true],
  ])('reads %s as the new flag, and notes an old one on stderr', (_case, argv, expected, noted) => {
    // Prepare
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    // Act
    const { values } = parseCli(argv, OPTIONS, RENAMED);
    // Assess
    expect(values['parking-queue']).toBe(expected);
    expect(written.join('')).toBe(noted ? '--queue is now --parking-queue (the old name still works)\n' : '');
  });

  it('still refuses a flag that was never a name', () => {
    expect(() => parseCli(['--queues', 'x'], OPTIONS, RENAMED)).toThrow(/--queues/);
  });
});
