/**
 * What `boomerang <argv>` does, as a function: the bin (boomerang.ts) runs it on the process's
 * arguments, and tests run it in their own process. It writes to process.stdout and process.stderr
 * and sets process.exitCode as the bin does; it never exits the process itself.
 */
import { readFileSync } from 'node:fs';
import { runCli } from './args.js';
import { type CliCommand, sameInThisRepository } from './command.js';
import { type Route, routeOf } from './route.js';
import { loadTypeScript } from './typescript-loader.js';
import { GuardedOutput } from '../observability/guarded-output.js';

/**
 * The commands, each loaded only when it is run (or listed): a start loads one command's modules
 * (invoke's engine, or the console's server), not all seven.
 */
const COMMANDS = [
  { name: 'topology', load: async () => (await import('./topology.js')).topologyCommand },
  { name: 'invoke', load: async () => (await import('./invoke.js')).invokeCommand },
  { name: 'publish', load: async () => (await import('./publish.js')).publishCommand },
  { name: 'policy', load: async () => (await import('./policy.js')).policyCommand },
  { name: 'parked', load: async () => (await import('./parked.js')).parkedCommand },
  { name: 'console', load: async () => (await import('./console.js')).consoleCommand },
  { name: 'local', load: async () => (await import('./local.js')).localCommand },
] as const satisfies readonly { readonly name: string; readonly load: () => Promise<CliCommand> }[];

/** The command list, with each command's one-line summary. */
async function overview(): Promise<string> {
  const commands = await Promise.all(COMMANDS.map((c) => c.load()));
  const width = Math.max(...commands.map((c) => c.name.length));
  return `Usage: boomerang <command> [args] [--functions-dir <dir>]
       boomerang help <command>      (or boomerang <command> --help)
       boomerang --version

Stateless delayed retries for RabbitMQ: the commands a team runs against its broker, on the queues
its functions folder declares (one file per queue, each exporting \`queue\` made by defineQueue).

${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

  --functions-dir <dir>  the folder of the queue files, before or after the command (default:
                         BOOMERANG_FUNCTIONS_DIR, else functions/ in the working directory)
  -h, --help             this text
  --version              the package's version

Exit codes: 0 done, 1 failed, 2 bad usage (each command's --help says more).
${sameInThisRepository('<command>')}`;
}

const say = (text: string): void => GuardedOutput.of(process.stdout).write(`${text}\n`);

/** How a run of `boomerang <argv>` ended. */
type BoomerangEnd = {
  /**
   * The command asks to exit as soon as stdout is flushed, even with work still pending (invoke: an
   * invocation is over when its summary is out, as Lambda would freeze it).
   */
  readonly exitWhenDone: boolean;
};

/**
 * Runs `boomerang <argv>`: a routing error shows the command list, a command's error its own usage;
 * the exit code is left in process.exitCode.
 * @example const { exitWhenDone } = await boomerang(['topology', 'export']);
 */
async function boomerang(argv: readonly string[]): Promise<BoomerangEnd> {
  const done = { exitWhenDone: false };
  let route: Route<(typeof COMMANDS)[number]>;
  try {
    route = routeOf(argv, COMMANDS);
  } catch (error) {
    await runCli(await overview(), async () => {
      throw error;
    });
    return done;
  }
  if (route.kind === 'overview') say(await overview());
  else if (route.kind === 'version') say(packageVersion());
  else if (route.kind === 'usage') say((await route.command.load()).usage);
  if (route.kind !== 'run') return done;
  const { argv: args, functionsDir } = route;
  // The flag wins over the variable, for this process and what it imports.
  if (functionsDir !== undefined) process.env.BOOMERANG_FUNCTIONS_DIR = functionsDir;
  await loadTypeScript();
  const command = await route.command.load();
  await runCli(command.usageFor?.(args) ?? command.usage, () => command.run([...args]));
  return { exitWhenDone: command.exitWhenDone === true };
}

const PACKAGE_NAME = 'boomerang-rabbitmq';

/**
 * The package's version, from the first package.json named `boomerang-rabbitmq` above `moduleUrl`:
 * two folders up from the source (shared/cli/), four from the compiled dist/package/shared/cli/,
 * installed or not.
 * @example packageVersion() // '0.2.0'
 */
function packageVersion(moduleUrl: string = import.meta.url): string {
  for (let dir = new URL('./', moduleUrl); ; dir = new URL('../', dir)) {
    const manifest = readManifest(new URL('package.json', dir));
    if (manifest?.name === PACKAGE_NAME && typeof manifest.version === 'string') return manifest.version;
    if (new URL('../', dir).href === dir.href) throw new Error(`no package.json of ${PACKAGE_NAME} above ${moduleUrl}`);
  }
}

/** The manifest at `url`, or undefined when there is none (or it is not JSON). */
function readManifest(url: URL): { readonly name?: unknown; readonly version?: unknown } | undefined {
  try {
    return JSON.parse(readFileSync(url, 'utf8')) as { readonly name?: unknown; readonly version?: unknown };
  } catch {
    return undefined;
  }
}

export { boomerang, packageVersion };
