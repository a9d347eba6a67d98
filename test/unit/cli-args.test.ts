import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseCli, synopsis } from '../../shared/cli/args.js';
import { closestWord, editDistance } from '../../shared/config/did-you-mean.js';
import { UsageError } from '../../shared/errors.js';

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

describe('an unknown option', () => {
  const INVOKE = { function: { type: 'string' }, 'work-queue': { type: 'string' }, 'budget-ms': { type: 'string' } } as const;

  it.each([
    [['--functon', 'orders'], 'unknown option --functon; did you mean --function?'],
    [['--budget', '100'], 'unknown option --budget; did you mean --budget-ms?'],
    [['--work_queue=x'], 'unknown option --work_queue; did you mean --work-queue?'],
    [['--hlep'], 'unknown option --hlep; did you mean --help?'],
    [['--zebra'], 'unknown option --zebra; the options are --function, --work-queue, --budget-ms, --help'],
  ])('%j: %s', (argv, message) => {
    expect(() => parseCli(argv, INVOKE)).toThrow(new UsageError(message));
  });

  it('is never answered with an old flag name', () => {
    expect(() => parseCli(['--queu', 'x'], OPTIONS, RENAMED)).toThrow(new UsageError('unknown option --queu; the options are --parking-queue, --json, --help'));
  });
});

describe('closestWord', () => {
  it.each([
    ['functon', ['function', 'work-queue'], 'function'],
    ['parkd', ['topology', 'parked'], 'parked'],
    ['topo', ['topology', 'parked'], 'topology'],
    ['x', ['topology', 'parked'], undefined],
    ['invoek', ['invoke', 'parked'], 'invoke'],
    ['purge', ['parked', 'publish'], undefined],
  ])('%s among %j: %s', (typed, known, closest) => {
    expect(closestWord(typed, known)).toBe(closest);
  });

  it.each([
    ['', '', 0],
    ['kitten', 'sitting', 3],
    ['flaw', 'lawn', 2],
    ['hlep', 'help', 1],
  ])('editDistance(%j, %j) is %i', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
  });
});

describe('synopsis', () => {
  it('keeps the usage lines and points to --help for the rest', () => {
    expect(synopsis('Usage: boomerang invoke pull|event [options]\n       boomerang invoke --help\n\nRuns one invocation.\n\n  --function <name>')).toBe(
      'Usage: boomerang invoke pull|event [options]\n       boomerang invoke --help\n(--help shows every option)',
    );
  });

  it('leaves a one-paragraph usage as it is', () => {
    expect(synopsis('Usage: boomerang help <command>')).toBe('Usage: boomerang help <command>');
  });
});
