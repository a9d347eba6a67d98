/**
 * The operator function with the console's operations: `boomerang console --remote <function>`
 * (shared/cli/remote-console-broker.ts) runs each console walk here as a {@link ConsoleCommand}, asks
 * the depths of the construct's queues (and, from inside the VPC, the management API's counts of its
 * native work queues) and checks the broker, with the operator's own AWS credentials;
 * every other op is the parking-lot CLI's (parked/operator-function.ts). Reads answer pages of their
 * JSON (a message in full may be larger than one Lambda response); replay and purge run in slices.
 */
import type { Env } from '../config/env.js';
import { ConfigError } from '../errors.js';
import {
  createOperatorFunction,
  lotOf,
  type OperatorContext,
  type OperatorFunctionOptions,
  type OperatorQueue,
  operatorSession,
  pageOf,
  sliceClock,
} from '../parked/operator-function.js';
import { type LotTarget, type OperatorRequest, type PageRequest, type TallyJson, tallyFromJson, tallyToJson } from '../parked/operator-protocol.js';
import type { OutputPage } from '../parked/output-window.js';
import type { Progress } from '../parked/progress.js';
import { newTally } from '../parked/replay.js';
import { checkBroker, nativeQueueCounts, queueDepths } from './console-broker.js';
import { type ConsoleCommand, runConsoleCommand } from './console-command.js';
import { consoleQueuesFromDeclared } from './console-queue.js';
import type { NativeCounts } from './native-counts.js';

/** The console's requests; `parkingQueue` names the lot a command walks. */
type ConsoleRequest = LotTarget &
  (
    | {
        readonly op: 'console';
        readonly command: ConsoleCommand;
        /** A read's page of its JSON. */
        readonly page?: PageRequest;
        /** A read's later pages: the read counts the first page showed (each read raises them on a quorum lot). */
        readonly readCounts?: Readonly<Record<string, unknown>>;
        /** A replay's slices: what the slices before replayed. */
        readonly tally?: TallyJson;
        /** A replay's or purge's slice time. */
        readonly sliceMs?: number;
      }
    | {
        readonly op: 'depths';
        readonly queues: readonly string[];
        /** Native work queues to count apart through the management API; a function older than this field ignores it. */
        readonly native?: readonly string[];
      }
    | { readonly op: 'check' }
  );

/** A read's answer: one page of the result's JSON. */
type ConsoleReadResponse = { readonly page: OutputPage; readonly readCounts: Readonly<Record<string, unknown>> };
/** An action's (one slice's) answer: its result (a replay's counts all the slices so far), and whether there may be more. */
type ConsoleActionResponse = { readonly result: Record<string, unknown>; readonly more: boolean; readonly tally?: TallyJson };
/** `native`: the counts of the native work queues asked, absent when none was asked (or the function predates them). */
type DepthsResponse = {
  readonly depths: readonly (readonly [string, number | null])[];
  readonly native?: readonly (readonly [string, NativeCounts])[];
};

const READS = new Set<ConsoleCommand['kind']>(['groups', 'messages', 'message']);
const READ_COUNT_HEADERS = ['x-delivery-count', 'x-acquired-count'];
const QUIET: Progress = { update: () => undefined, print: () => undefined, stop: () => undefined };

/** A message detail's read counts set to `pinned` (the first page's), so every page is of one output. */
function pinReadCounts(result: Record<string, unknown>, pinned: Readonly<Record<string, unknown>> | undefined): Readonly<Record<string, unknown>> {
  const headers = (result.message as { headers?: Record<string, unknown> } | null | undefined)?.headers;
  if (headers === undefined) return {};
  for (const name of READ_COUNT_HEADERS) if (pinned !== undefined && name in pinned && name in headers) headers[name] = pinned[name];
  return Object.fromEntries(READ_COUNT_HEADERS.filter((name) => name in headers).map((name) => [name, headers[name]]));
}

/**
 * The Lambda handler of the operator function, serving every queue of `queues` (the construct's), to
 * `boomerang parked --remote` and `boomerang console --remote`. Depths only of the queues' work, delay
 * and parking queues; commands only on their parking lots: its invoker acts with the broker
 * credentials it holds, on its construct's queues only.
 * @example
 * import { queue as orders } from './functions/orders.js';
 * export const handler = createOperatorConsoleFunction([orders]);
 */
function createOperatorConsoleFunction(
  queues: readonly OperatorQueue[],
  options: OperatorFunctionOptions = {},
): (event: ConsoleRequest | OperatorRequest, context?: OperatorContext) => Promise<unknown> {
  const parked = createOperatorFunction(queues, options);
  const env: Env = options.env ?? process.env;
  const served = (): { config: ReturnType<OperatorQueue['loadConfig']>; names: string[]; native: string[] }[] =>
    queues.map((q) => {
      const config = q.loadConfig(env, 'pull');
      const [shown] = consoleQueuesFromDeclared([{ name: q.name, loadConfig: () => config }], env);
      return {
        config,
        names: shown === undefined ? [] : [shown.workQueue, ...shown.delayQueues, shown.parkingQueue],
        native: shown?.native === true ? [shown.workQueue] : [],
      };
    });
  return async (event, context) => {
    switch (event.op) {
      case 'check':
        for (const { config } of served()) await checkBroker(config, 'boomerang-operator');
        return { ok: true };
      case 'depths': {
        const all = served();
        const native = event.native ?? [];
        const stray = event.queues.find((name) => !all.some((q) => q.names.includes(name)));
        if (stray !== undefined)
          throw new ConfigError(
            `${JSON.stringify(stray)}: the operator function reports the depths of its construct's queues only (${all.flatMap((q) => q.names).join(', ')})`,
          );
        const notNative = native.find((name) => !all.some((q) => q.native.includes(name)));
        if (notNative !== undefined)
          throw new ConfigError(
            `${JSON.stringify(notNative)}: the operator function counts apart its construct's native work queues only (${all.flatMap((q) => q.native).join(', ') || 'none'})`,
          );
        const depths = new Map<string, number | null>();
        const counts = new Map<string, NativeCounts>();
        for (const q of all) {
          const asked = event.queues.filter((name) => q.names.includes(name) && !depths.has(name));
          const apart = native.filter((name) => q.native.includes(name) && !counts.has(name));
          const [read, apartRead] = await Promise.all([
            asked.length > 0 ? queueDepths(q.config, asked, 'boomerang-operator') : new Map<string, number | null>(),
            nativeQueueCounts(q.config, apart),
          ]);
          for (const [name, depth] of read) depths.set(name, depth);
          for (const [name, count] of apartRead) counts.set(name, count);
        }
        return {
          depths: event.queues.map((name) => [name, depths.get(name) ?? null] as const),
          ...(event.native === undefined ? {} : { native: native.map((name) => [name, counts.get(name) as NativeCounts] as const) }),
        } satisfies DepthsResponse;
      }
      case 'console':
        return consoleOp(event, lotOf(queues, event, env), context);
      default:
        return parked(event, context);
    }
  };
}

/** One console command on the lot the request names: a read's page, or an action's slice. */
async function consoleOp(
  event: Extract<ConsoleRequest, { op: 'console' }>,
  lot: ReturnType<typeof lotOf>,
  context: OperatorContext | undefined,
): Promise<ConsoleReadResponse | ConsoleActionResponse> {
  const { command } = event;
  const session = operatorSession(lot.config, lot.queue, context);
  const settings = { workQueue: lot.config.workQueue, retryHeader: lot.config.retryHeader };
  if (READS.has(command.kind)) {
    const window = pageOf(event.page);
    const result = (await session((ctx) => runConsoleCommand({ ...ctx, progress: () => QUIET }, command, settings))) as Record<string, unknown>;
    const readCounts = pinReadCounts(result, event.readCounts);
    window.write(JSON.stringify(result));
    return { page: window.page(), readCounts };
  }
  const sliceOver = command.kind === 'edit-replay' ? undefined : sliceClock(event.sliceMs ?? 20_000);
  const tally = tallyFromJson(event.tally ?? tallyToJson(newTally()));
  const result = (await session(
    (ctx) => runConsoleCommand({ ...ctx, sliceOver, progress: () => QUIET }, command, settings, tally),
    command.kind === 'replay',
  )) as Record<string, unknown> & { ending: string; selected?: number };
  const limit = 'limit' in command ? command.limit : 0;
  const more =
    sliceOver !== undefined && result.ending === 'early' && sliceOver() && (command.kind === 'replay' ? tally.selected : (result.selected ?? 0)) < limit;
  return { result, more, ...(command.kind === 'replay' ? { tally: tallyToJson(tally) } : {}) };
}

export { createOperatorConsoleFunction };
export type { ConsoleActionResponse, ConsoleReadResponse, DepthsResponse };
