import { UsageError } from '../errors.js';
import { didYouMean } from '../config/did-you-mean.js';

/** A command as routing sees it: its name (the dispatcher loads the command itself only once it is chosen). */
type Named = { readonly name: string };

/** What `boomerang <argv>` asks for: the command list, the version, a command's usage, or a command to run. */
type Route<C extends Named = Named> =
  | { readonly kind: 'overview' }
  | { readonly kind: 'version' }
  | { readonly kind: 'usage'; readonly command: C }
  | {
      readonly kind: 'run';
      readonly command: C;
      /** The command's own arguments, `--functions-dir` taken out. */
      readonly argv: readonly string[];
      /** `--functions-dir <dir>`: the folder of the queue files for this run, over BOOMERANG_FUNCTIONS_DIR. */
      readonly functionsDir: string | undefined;
    };

const FUNCTIONS_DIR = '--functions-dir';

/**
 * `argv` without `--functions-dir <dir>` (or `--functions-dir=<dir>`), wherever it stands before a
 * `--`, and its value (the last one given). A missing or empty value is a `UsageError`: a flag that
 * swallowed the next one would run on the wrong folder.
 * @example takeFunctionsDir(['topology', '--functions-dir', 'src/queues', 'export']) // { argv: ['topology', 'export'], functionsDir: 'src/queues' }
 */
function takeFunctionsDir(argv: readonly string[]): { readonly argv: string[]; readonly functionsDir: string | undefined } {
  const rest: string[] = [];
  let functionsDir: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (arg !== FUNCTIONS_DIR && !arg.startsWith(`${FUNCTIONS_DIR}=`)) {
      rest.push(arg);
      continue;
    }
    const value = arg === FUNCTIONS_DIR ? argv[++i] : arg.slice(FUNCTIONS_DIR.length + 1);
    if (value === undefined || value.trim() === '' || (arg === FUNCTIONS_DIR && value.startsWith('-'))) {
      throw new UsageError(`${FUNCTIONS_DIR} needs a folder: ${FUNCTIONS_DIR} <dir> (the folder of your queue files)`);
    }
    functionsDir = value;
  }
  return { argv: rest, functionsDir };
}

/**
 * Reads `boomerang <argv>` (pure): nothing, `help`, `-h` or `--help` asks for the command list;
 * `help <command>` for its usage (as `<command> --help` does, through the command itself). An unknown
 * command or option is a `UsageError` naming it and the commands.
 * @example routeOf(['topology', 'export'], commands) // { kind: 'run', command: topology, argv: ['export'], functionsDir: undefined }
 */
function routeOf<C extends Named>(argv: readonly string[], commands: readonly C[]): Route<C> {
  const {
    argv: [first, ...rest],
    functionsDir,
  } = takeFunctionsDir(argv);
  const named = (name: string): C => {
    const command = commands.find((c) => c.name === name);
    if (command === undefined) {
      const names = commands.map((c) => c.name);
      const hint = name.startsWith('-') ? '' : didYouMean(name, names);
      throw new UsageError(`unknown ${name.startsWith('-') ? 'option' : 'command'} ${JSON.stringify(name)}${hint || `; the commands are ${names.join(', ')}`}`);
    }
    return command;
  };
  if (first === undefined || first === '--help' || first === '-h') return { kind: 'overview' };
  if (first === '--version') return { kind: 'version' };
  if (first === 'help') {
    const [name, extra] = rest;
    if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}: boomerang help <command>`);
    // `help --help` asks for help's own usage: the command list.
    return name === undefined || name === '--help' || name === '-h' ? { kind: 'overview' } : { kind: 'usage', command: named(name) };
  }
  return { kind: 'run', command: named(first), argv: rest, functionsDir };
}

export { routeOf, takeFunctionsDir };
export type { Route };
