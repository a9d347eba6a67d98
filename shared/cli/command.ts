/**
 * One command of the `boomerang` CLI (`boomerang topology ...`): what the dispatcher lists, prints
 * for `--help`, and runs. A command module exports one and runs nothing when imported.
 * @example const topologyCommand: CliCommand = { name: 'topology', summary: '...', usage: USAGE, run: main };
 */
type CliCommand = {
  /** What a team types after `boomerang`, and what `npm run <name>` runs in this repository. */
  readonly name: string;
  /** One line for `boomerang --help`. */
  readonly summary: string;
  /** The whole usage text, printed by `--help` and after a usage error. */
  readonly usage: string;
  /**
   * The usage text shown after a usage error, when it depends on the arguments (`parked list`
   * shows list's options). @default the `usage` text
   */
  readonly usageFor?: (argv: readonly string[]) => string;
  /**
   * Exit as soon as the command returned and stdout is flushed, even with work still pending: an
   * invocation is over when its summary is out, as Lambda would freeze it. @default false
   */
  readonly exitWhenDone?: boolean;
  /** Runs the command on its arguments (the words after its name); resolves with the exit code. */
  readonly run: (argv: string[]) => Promise<number>;
};

/**
 * The line each usage text ends with: this repository's npm scripts run the same commands.
 * @example sameInThisRepository('topology') // In Boomerang's own repository, npm run topology -- <args> does the same.
 */
function sameInThisRepository(name: string): string {
  return `In Boomerang's own repository, npm run ${name} -- <args> does the same.`;
}

export { sameInThisRepository };
export type { CliCommand };
