import { readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Env } from '../config/env.js';
import { ConfigError } from '../errors.js';
import { isQueueDefinition, type QueueDefinition } from './define-queue.js';

/** Where a team's queue files live when nothing else says: `functions/` in the working directory (the project's root under npm). */
const DEFAULT_FUNCTIONS_DIR = 'functions';

/** A declared queue and the file that declares it. */
type DeclaredQueue = QueueDefinition & {
  /** The absolute path of its file. */
  readonly file: string;
};

type DiscoveryOptions = {
  /** The folder to read. @default BOOMERANG_FUNCTIONS_DIR, else functions/ in the working directory */
  readonly dir?: string;
  /**
   * The definition files to read instead of a folder, each exporting `queue` (absolute, or relative to the
   * working directory); `dir` and BOOMERANG_FUNCTIONS_DIR are then not read. @default every file in the folder
   */
  readonly files?: readonly string[];
  /** @default process.env */
  readonly env?: Env;
};

/** The folder discovery reads, absolute: the option, else BOOMERANG_FUNCTIONS_DIR, else functions/ in the working directory. */
function functionsDir(options: DiscoveryOptions = {}): string {
  const fromEnv = (options.env ?? process.env).BOOMERANG_FUNCTIONS_DIR?.trim();
  return resolve(options.dir ?? (fromEnv === undefined || fromEnv === '' ? DEFAULT_FUNCTIONS_DIR : fromEnv));
}

/** The files discovery imports: TypeScript and JavaScript modules, without declarations and tests. */
function queueFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    throw new ConfigError(
      `The functions folder ${dir} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): set BOOMERANG_FUNCTIONS_DIR to the folder of your queue files`,
    );
  }
  return names
    .filter((name) => /\.(m?ts|m?js)$/.test(name) && !/\.d\.m?ts$/.test(name) && !/\.test\.m?[jt]s$/.test(name))
    .sort()
    .map((name) => join(dir, name));
}

/**
 * Every queue declared in the functions folder (or in `files`): each file must export `queue` made by
 * `defineQueue`. Throws `ConfigError` naming the file that does not, and refusing two queues with one
 * name or one work queue. Sorted by file name (`files` in their order).
 * @example const queues = await loadDeclaredQueues(); // webhooks, partner-sync
 */
async function loadDeclaredQueues(options: DiscoveryOptions = {}): Promise<DeclaredQueue[]> {
  const dir = options.files === undefined ? functionsDir(options) : undefined;
  const where = dir === undefined ? 'a definition file' : `every file in ${relative(process.cwd(), dir) || dir}/`;
  const queues: DeclaredQueue[] = [];
  for (const file of dir === undefined ? (options.files ?? []).map((f) => resolve(f)) : queueFiles(dir)) {
    const shown = relative(process.cwd(), file) || file;
    const module = await importQueueFile(file, shown);
    if (!isQueueDefinition(module.queue)) {
      throw new ConfigError(
        `${shown} declares no queue: ${where} must export \`queue\` made by defineQueue ` +
          "(export const { queue, pull, event } = defineQueue({ name, handler, workQueue, ... }) with defineQueue from 'boomerang-rabbitmq')" +
          (dir === undefined ? '' : '; move other code out of that folder'),
      );
    }
    const queue = module.queue;
    const sameName = queues.find((q) => q.name === queue.name);
    if (sameName)
      throw new ConfigError(
        `${shown} and ${relative(process.cwd(), sameName.file)} both declare a queue named ${JSON.stringify(queue.name)}: names must be unique (they name the functions)`,
      );
    const sameQueue = queues.find((q) => q.workQueue === queue.workQueue);
    if (sameQueue)
      throw new ConfigError(
        `${shown} (${queue.name}) and ${relative(process.cwd(), sameQueue.file)} (${sameQueue.name}) both consume the work queue ${JSON.stringify(queue.workQueue)}: give each queue its own`,
      );
    queues.push(Object.freeze({ ...queue, file }));
  }
  if (queues.length === 0) {
    throw new ConfigError(
      dir === undefined
        ? 'No queue is declared: the list of definition files is empty'
        : `No queue is declared in ${dir}: add a file there that exports \`queue\` made by defineQueue`,
    );
  }
  return queues;
}

/** Imports one queue file; a failure names the file (a typo in an option, a syntax error, a missing import). */
async function importQueueFile(file: string, shown: string): Promise<Record<string, unknown>> {
  try {
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(`${shown}: ${(error as Error).message}`, { cause: error });
  }
}

/** The declared queue named `name`; the error lists the names there are. */
function pickQueue(queues: readonly DeclaredQueue[], name: string): DeclaredQueue {
  const queue = queues.find((q) => q.name === name);
  if (queue === undefined) throw new ConfigError(`--function ${name}: no such queue; the declared queues are ${queues.map((q) => q.name).join(', ')}`);
  return queue;
}

export { DEFAULT_FUNCTIONS_DIR, functionsDir, loadDeclaredQueues, pickQueue, queueFiles };
export type { DeclaredQueue };
