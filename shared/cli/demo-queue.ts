import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Env } from '../config/env.js';
import { ConfigError } from '../errors.js';
import { type DeclaredQueue, functionsDir, loadDeclaredQueues, pickQueue, queueFiles } from '../queues/declared-queues.js';

/**
 * The package's own example queues (webhooks, partner-sync): the repository's functions/ folder,
 * which the package ships compiled as dist/package/functions/. Two folders up from shared/cli/, from
 * the source and from dist/package/shared/cli/ alike.
 */
const PACKAGE_EXAMPLES_DIR = fileURLToPath(new URL('../../functions/', import.meta.url));

/** The queue the demo runs, and the note for stderr when it is the package's example rather than the team's. */
type DemoQueue = { readonly queue: DeclaredQueue; readonly notice: string | undefined };

/**
 * The declared queue the demo runs for `--function <name>`: the team's, when its functions folder
 * declares one of that name; else, for a queue the demo knows how to feed (`known`), the package's
 * own example of that name, with a notice saying so. A team's project has neither example, and
 * `boomerang local` is the first thing a newcomer runs. A folder that cannot be loaded (a file
 * without `queue`, a syntax error) is reported, not passed over.
 * @example const { queue, notice } = await demoQueue('webhooks', ['webhooks', 'partner-sync'], process.env);
 */
async function demoQueue(name: string, known: readonly string[], env: Env): Promise<DemoQueue> {
  const dir = functionsDir({ env });
  const exists = existsSync(dir);
  const declared = exists && queueFiles(dir).length > 0 ? await loadDeclaredQueues({ dir, env }) : [];
  const own = declared.find((q) => q.name === name);
  if (own !== undefined) return { queue: own, notice: undefined };
  if (!known.includes(name)) {
    if (declared.length > 0) pickQueue(declared, name); // throws, naming the declared queues
    throw new ConfigError(unfedQueue(name, known));
  }
  const example = pickQueue(await loadDeclaredQueues({ dir: PACKAGE_EXAMPLES_DIR, env }), name);
  const shown = relative(process.cwd(), dir) || dir;
  const why = !exists ? 'does not exist' : declared.length === 0 ? 'declares no queue' : `declares no ${name} queue`;
  return {
    queue: example,
    notice: `note: ${shown}/ ${why}: the demo runs the package's own ${name} example (${relative(process.cwd(), example.file) || example.file})`,
  };
}

/** Why the demo refuses a queue it has no messages for: the team runs it with `invoke`. */
function unfedQueue(name: string, known: readonly string[]): string {
  return `--function ${name}: the demo feeds ${known.join(' and ')} only (it knows their messages); run yours with boomerang invoke pull --function ${name}`;
}

export { demoQueue, PACKAGE_EXAMPLES_DIR, unfedQueue };
