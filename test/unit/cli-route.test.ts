import { describe, expect, it } from 'vitest';
import type { CliCommand } from '../../shared/cli/command.js';
import { packageVersion } from '../../shared/cli/main.js';
import { routeOf, takeFunctionsDir } from '../../shared/cli/route.js';
import { loadTypeScript } from '../../shared/cli/typescript-loader.js';
import { UsageError } from '../../shared/errors.js';

/** A command that does nothing: routing never runs one. */
const command = (name: string): CliCommand => ({ name, summary: `${name} things`, usage: `Usage: boomerang ${name}`, run: async () => 0 });
const COMMANDS = [command('topology'), command('parked')];
const [TOPOLOGY, PARKED] = COMMANDS as [CliCommand, CliCommand];

describe('takeFunctionsDir', () => {
  it.each<[string, string[], string[], string | undefined]>([
    ['no flag', ['topology', 'export'], ['topology', 'export'], undefined],
    ['before the command', ['--functions-dir', 'src/queues', 'topology', 'export'], ['topology', 'export'], 'src/queues'],
    ['after the command, with =', ['topology', 'export', '--functions-dir=src/queues'], ['topology', 'export'], 'src/queues'],
    ['between the command and its words', ['topology', '--functions-dir', 'a', 'export'], ['topology', 'export'], 'a'],
    ['twice: the last wins', ['--functions-dir', 'a', 'topology', '--functions-dir=b'], ['topology'], 'b'],
    ['after --: a word of the command', ['parked', '--', '--functions-dir', 'a'], ['parked', '--', '--functions-dir', 'a'], undefined],
  ])('takes the flag out: %s', (_case, argv, rest, dir) => {
    // Act
    const taken = takeFunctionsDir(argv);
    // Assess
    expect(taken).toEqual({ argv: rest, functionsDir: dir });
  });

  it.each([[['topology', '--functions-dir']], [['--functions-dir=', 'topology']], [['--functions-dir', '--help']], [['--functions-dir', ' ']]])(
    'refuses a missing value in %j',
    (argv) => {
      expect(() => takeFunctionsDir(argv)).toThrow(new UsageError('--functions-dir needs a folder: --functions-dir <dir> (the folder of your queue files)'));
    },
  );
});

describe('routeOf', () => {
  it.each([[[]], [['--help']], [['-h']], [['help']], [['help', '--help']], [['help', '-h']], [['--functions-dir', 'x']]])(
    'lists the commands for %j',
    (argv) => {
      expect(routeOf(argv, COMMANDS)).toEqual({ kind: 'overview' });
    },
  );

  it('asks for the version', () => {
    expect(routeOf(['--version'], COMMANDS)).toEqual({ kind: 'version' });
  });

  it("asks for a command's usage with help <command>", () => {
    expect(routeOf(['help', 'parked'], COMMANDS)).toEqual({ kind: 'usage', command: PARKED });
  });

  it('runs a command on the words after its name, --functions-dir taken out', () => {
    // Act
    const route = routeOf(['topology', 'apply', '--functions-dir', 'q', '--function', 'orders'], COMMANDS);
    // Assess
    expect(route).toEqual({ kind: 'run', command: TOPOLOGY, argv: ['apply', '--function', 'orders'], functionsDir: 'q' });
  });

  it('leaves a command its own --help', () => {
    expect(routeOf(['parked', 'list', '--help'], COMMANDS)).toMatchObject({ kind: 'run', command: PARKED, argv: ['list', '--help'] });
  });

  it.each([
    [['nope'], 'unknown command "nope"; the commands are topology, parked'],
    [['parkd'], 'unknown command "parkd"; did you mean parked?'],
    [['topolgy', 'apply'], 'unknown command "topolgy"; did you mean topology?'],
    [['help', 'topo'], 'unknown command "topo"; did you mean topology?'],
    [['help', 'nope'], 'unknown command "nope"; the commands are topology, parked'],
    [['--nope', 'topology'], 'unknown option "--nope"; the commands are topology, parked'],
    [['help', 'parked', 'list'], 'unexpected argument "list": boomerang help <command>'],
  ])('refuses %j, naming it', (argv, message) => {
    expect(() => routeOf(argv, COMMANDS)).toThrow(new UsageError(message));
  });
});

describe('packageVersion', () => {
  it("reads the package's version from the package.json above the module", async () => {
    // Prepare
    const { default: manifest } = (await import('../../package.json', { with: { type: 'json' } })) as { default: { version: string } };
    // Act and Assess: from the source, and from where the compiled module sits (four folders down)
    expect(packageVersion()).toBe(manifest.version);
    expect(packageVersion(new URL('../../dist/package/shared/cli/main.js', import.meta.url).href)).toBe(manifest.version);
  });

  it('says so when there is none', () => {
    expect(() => packageVersion('file:///nowhere/shared/cli/main.js')).toThrow('no package.json of boomerang-rabbitmq above file:///nowhere/');
  });
});

describe('loadTypeScript', () => {
  it('registers nothing from the .ts source, which runs under tsx already', async () => {
    expect(await loadTypeScript('file:///repo/shared/cli/typescript-loader.ts')).toBe(false);
  });
});
