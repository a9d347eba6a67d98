#!/usr/bin/env node
/**
 * `boomerang`, the package's one command (its `bin`): `boomerang <command> [args]` runs topology,
 * invoke, parked, console or local, on the queue files of the team's functions/ folder (or
 * `--functions-dir`). This repository's `npm run <command> -- <args>` scripts run it from the source.
 * Nothing in the runtime's import graph (shared/index.ts) imports it.
 */
import { runCli } from './args.js';
import { type CliCommand, sameInThisRepository } from './command.js';
import { packageVersion } from './package-version.js';
import { type Route, routeOf } from './route.js';
import { loadTypeScript } from './typescript-loader.js';
import { GuardedOutput } from '../observability/guarded-output.js';

/**
 * The commands, each loaded only when it is run (or listed): a start loads one command's modules
 * (invoke's engine, or the console's server), not all five.
 */
const COMMANDS = [
  { name: 'topology', load: async () => (await import('./topology.js')).topologyCommand },
  { name: 'invoke', load: async () => (await import('./invoke.js')).invokeCommand },
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

/** Runs `boomerang <argv>`: a routing error shows the command list, a command's error its own usage. */
async function boomerang(argv: readonly string[]): Promise<void> {
  let route: Route<(typeof COMMANDS)[number]>;
  try {
    route = routeOf(argv, COMMANDS);
  } catch (error) {
    return runCli(await overview(), async () => {
      throw error;
    });
  }
  if (route.kind === 'overview') return say(await overview());
  if (route.kind === 'version') return say(packageVersion());
  if (route.kind === 'usage') return say((await route.command.load()).usage);
  const { argv: args, functionsDir } = route;
  // The flag wins over the variable, for this process and what it imports.
  if (functionsDir !== undefined) process.env.BOOMERANG_FUNCTIONS_DIR = functionsDir;
  await loadTypeScript();
  const command = await route.command.load();
  await runCli(command.usageFor?.(args) ?? command.usage, () => command.run([...args]));
  if (command.exitWhenDone) process.stdout.write('', () => process.exit());
}

await boomerang(process.argv.slice(2));
