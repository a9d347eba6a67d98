import { type Config, DEFAULTS, loadConfig } from '../config/config.js';
import type { Env } from '../config/env.js';
import { type EnvOverride, formatOverrides } from '../config/env-overrides.js';
import type { Handler } from '../message/message.js';
import { type DeclaredQueue, loadDeclaredQueues, pickQueue } from '../queues/declared-queues.js';
import type { Mode } from '../queues/deploy-options.js';
import { asUsage } from './args.js';
import { UsageError } from '../errors.js';

/** What a CLI acts on: a declared queue (its handler and config), or a work queue from the environment alone. */
type QueueTarget = {
  /** The declared queue's name, or the work queue for an environment-only target. */
  readonly label: string;
  readonly config: Config;
  /** Undefined for an environment-only target (`--work-queue`). */
  readonly queue: DeclaredQueue | undefined;
  /** The variables set but replaced by the queue's file (none for an environment-only target). */
  readonly overrides: readonly EnvOverride[];
};

/** `--function <name>` and `--work-queue <name>` (as `queue`). */
type QueueFlags = { readonly function?: string; readonly queue?: string };

/**
 * The queues a CLI acts on, read before anything connects (a bad value is a `UsageError`, exit 2):
 * `--function <name>` one declared queue; `--work-queue <name>` a work queue configured by the environment
 * alone (WORK_QUEUE, MAX_RETRIES...), as before queues were declared; neither: every declared queue.
 * @example const targets = await queueTargets({ function: 'webhooks' }, process.env, 'pull');
 */
async function queueTargets(flags: QueueFlags, env: Env, mode: Mode = 'pull'): Promise<QueueTarget[]> {
  if (flags.function !== undefined && flags.queue !== undefined) {
    throw new UsageError(
      `--work-queue and --function go separately: --function ${flags.function} consumes the work queue set in its file; --work-queue runs a queue configured by the environment alone`,
    );
  }
  if (flags.queue !== undefined) {
    const config = await asUsage(() => loadConfig({ ...env, WORK_QUEUE: flags.queue }, mode === 'event' ? DEFAULTS.eventFunctionName : DEFAULTS.functionName));
    return [{ label: config.workQueue, config, queue: undefined, overrides: [] }];
  }
  const declared = await asUsage(() => loadDeclaredQueues({ env }));
  const chosen = flags.function === undefined ? declared : [await asUsage(() => pickQueue(declared, flags.function as string))];
  return asUsage(() => chosen.map((queue) => ({ label: queue.name, config: queue.loadConfig(env, mode), queue, overrides: queue.overrides(env) })));
}

/**
 * The one declared queue an invocation runs: `--function <name>`, or the only declared queue. The
 * error lists the declared names.
 */
async function singleTarget(flags: QueueFlags, env: Env, mode: Mode): Promise<QueueTarget & { readonly handler: Handler | undefined }> {
  const targets = await queueTargets(flags, env, mode);
  const [target] = targets;
  if (target === undefined || targets.length > 1) {
    throw new UsageError(`say which queue: --function <name>; the declared queues are ${targets.map((t) => t.label).join(', ')}`);
  }
  return { ...target, handler: target.queue?.handler };
}

/**
 * The note the CLIs print on stderr before they act: one line per variable set but replaced by its
 * queue's file, with both values (`formatOverrides`); empty when there is none.
 */
function overrideNote(targets: readonly QueueTarget[]): string {
  return targets.flatMap((t) => formatOverrides(t.overrides).map((line) => `note: ${line}\n`)).join('');
}

export { overrideNote, queueTargets, singleTarget };
export type { QueueTarget };
