/**
 * The queue definitions, read synchronously for a construct's constructor: a child Node process
 * (definitions-child.ts, with tsx registered so that TypeScript queue files load) imports the files and
 * answers with what the construct deploys per queue. Node 20 cannot import an ES module synchronously.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../errors.js';
import type { DeployedQueue } from './deployed-queue.js';
import { ownModule } from './own-modules.js';

/** What the child is asked: a folder or a list of files (absolute), and the variables every function gets. */
type DefinitionsRequest = {
  readonly functionsDir?: string;
  readonly files?: readonly string[];
  readonly functionEnvironment: Readonly<Record<string, string>>;
};

/** What the child answers: the queues, or the error that stopped it (a `ConfigError` names the file or the variable). */
type DefinitionsAnswer = { readonly queues: readonly DeployedQueue[] } | { readonly error: { readonly name: string; readonly message: string } };

/** The child's answer goes to its fourth pipe, so that whatever a definition file prints cannot garble it. */
const ANSWER_FD = 3;

/** The child script, beside this module (TypeScript here, JavaScript in the installed package). */
const CHILD = ownModule(import.meta.url, './definitions-child');

/** tsx's loader, resolved from this package (a dependency of it), not from the team's project. */
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/**
 * The queues declared in `request.functionsDir` (every file there, as discovery reads it) or in
 * `request.files`, each checked against `functionEnvironment` as its functions will read it. Runs in the
 * working directory, so that a team's tsconfig and node_modules apply. Throws `ConfigError` naming the
 * file or the variable at fault, as discovery and the functions would.
 * @example const queues = readQueueDefinitions({ functionsDir: '/project/functions', functionEnvironment: {} });
 */
function readQueueDefinitions(request: DefinitionsRequest): DeployedQueue[] {
  const child = spawnSync(process.execPath, ['--import', TSX_LOADER, CHILD], {
    input: JSON.stringify(request),
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
    windowsHide: true,
  });
  // What the team's files print at import is theirs to see; stderr keeps stdout free for the CDK app.
  for (const printed of [child.stdout, child.stderr]) if (printed && printed.length > 0) process.stderr.write(printed);
  const text = child.output?.[ANSWER_FD]?.toString('utf8') ?? '';
  if (child.error !== undefined || text === '') {
    throw new Error(
      `Reading the queue definitions failed (${child.error?.message ?? `the child process ended with ${child.status ?? child.signal} and no answer`}): ${CHILD}`,
    );
  }
  const answer = JSON.parse(text) as DefinitionsAnswer;
  if ('queues' in answer) return [...answer.queues];
  const { name, message } = answer.error;
  throw name === 'ConfigError' ? new ConfigError(message) : new Error(`Reading the queue definitions failed: ${name}: ${message}`);
}

export { ANSWER_FD, readQueueDefinitions };
export type { DefinitionsAnswer, DefinitionsRequest };
