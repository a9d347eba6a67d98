#!/usr/bin/env node
/**
 * `boomerang`, the package's one command (its `bin`): `boomerang <command> [args]` runs topology,
 * invoke, parked, console or local, on the queue files of the team's functions/ folder (or
 * `--functions-dir`). This repository's `npm run <command> -- <args>` scripts run it from the source.
 * Nothing in the runtime's import graph (shared/index.ts) imports it.
 */
import { runCli } from './args.js';
import { type CliCommand, sameInThisRepository } from './command.js';
import { consoleCommand } from './console.js';
import { invokeCommand } from './invoke.js';
import { localCommand } from './local.js';
import { packageVersion } from './package-version.js';
import { parkedCommand } from './parked.js';
import { type Route, routeOf } from './route.js';
import { topologyCommand } from './topology.js';
import { loadTypeScript } from './typescript-loader.js';
import { GuardedOutput } from '../observability/guarded-output.js';

const COMMANDS: readonly CliCommand[] = [topologyCommand, invokeCommand, parkedCommand, consoleCommand, localCommand];

const width = Math.max(...COMMANDS.map((c) => c.name.length));
const OVERVIEW = `Usage: boomerang <command> [args] [--functions-dir <dir>]
       boomerang help <command>      (or boomerang <command> --help)
       boomerang --version

Stateless delayed retries for RabbitMQ: the commands a team runs against its broker, on the queues
its functions folder declares (one file per queue, each exporting \`queue\` made by defineQueue).

${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

  --functions-dir <dir>  the folder of the queue files, before or after the command (default:
                         BOOMERANG_FUNCTIONS_DIR, else functions/ in the working directory)
  -h, --help             this text
  --version              the package's version

Exit codes: 0 done, 1 failed, 2 bad usage (each command's --help says more).
${sameInThisRepository('<command>')}`;

const say = (text: string): void => GuardedOutput.of(process.stdout).write(`${text}\n`);

/** Runs `boomerang <argv>`: a routing error shows the command list, a command's error its own usage. */
async function boomerang(argv: readonly string[]): Promise<void> {
  let route: Route;
  try {
    route = routeOf(argv, COMMANDS);
  } catch (error) {
    return runCli(OVERVIEW, async () => {
      throw error;
    });
  }
  if (route.kind === 'overview') return say(OVERVIEW);
  if (route.kind === 'version') return say(packageVersion());
  if (route.kind === 'usage') return say(route.command.usage);
  const { command, argv: args, functionsDir } = route;
  // The flag wins over the variable, for this process and what it imports.
  if (functionsDir !== undefined) process.env.BOOMERANG_FUNCTIONS_DIR = functionsDir;
  await loadTypeScript();
  await runCli(command.usageFor?.(args) ?? command.usage, () => command.run([...args]));
  if (command.exitWhenDone) process.stdout.write('', () => process.exit());
}

await boomerang(process.argv.slice(2));
