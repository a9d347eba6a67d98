/**
 * The console's walks of a parking lot as data, not closures: a closure cannot cross a Lambda
 * invocation, and `boomerang console --remote` runs them in the operator function. The direct broker
 * and the function both run a command with {@link runConsoleCommand}, so a remote console does what
 * a direct one does. Filters and edits travel as the request's raw fields and are parsed again where
 * the command runs (with the same checks), never as parsed objects.
 */
import type { CommandContext, WalkResult } from '../parked/context.js';
import { groupParked, type GroupsResult } from '../parked/groups.js';
import { purgeParked } from '../parked/purge.js';
import { newTally, replayParked, type Refusal, type ReplayTally, type Unsendable } from '../parked/replay.js';
import { editAndReplay, type EditReplayResult } from './edit-replay.js';
import { ConsoleInputError } from './errors.js';
import { parseMessageEdit } from './message-edit.js';
import { type MessagePick, readMessageDetail, readMessageList } from './parked-reads.js';
import { filterFromRequest, isFilterName } from './request-filter.js';

/** A filter as the request gave it: the CLI's flag names (`group`, `error`, `older-than`...) and their text values. */
type FilterFields = Readonly<Record<string, string | readonly string[]>>;

/** One walk of a parking lot the console asks for. */
type ConsoleCommand =
  | { readonly kind: 'groups'; readonly nowMs: number }
  | { readonly kind: 'messages'; readonly filter: FilterFields; readonly limit: number; readonly nowMs: number }
  | { readonly kind: 'message'; readonly pick: MessagePick }
  | { readonly kind: 'replay'; readonly filter: FilterFields; readonly limit: number; readonly ratePerSecond: number }
  | { readonly kind: 'purge'; readonly filter: FilterFields; readonly limit: number }
  | { readonly kind: 'edit-replay'; readonly messageId: string; readonly edit: unknown };

/** A replay's outcome as JSON (its maps as objects), with the walk's counts. */
type ConsoleReplayResult = WalkResult & {
  readonly selected: number;
  readonly noSource: number;
  readonly byQueue: Readonly<Record<string, number>>;
  readonly unroutable: Readonly<Record<string, number>>;
  readonly refused: readonly Refusal[];
  readonly unsendable: readonly Unsendable[];
};

/** What each command answers: plain JSON, the same from the direct broker and the operator function. */
type ConsoleResults = {
  readonly groups: GroupsResult;
  readonly messages: WalkResult & { readonly messages: Record<string, unknown>[]; readonly matched: number };
  readonly message: WalkResult & { readonly message: Record<string, unknown> | null };
  readonly replay: ConsoleReplayResult;
  readonly purge: WalkResult & { readonly selected: number; readonly deleted: number };
  readonly 'edit-replay': EditReplayResult;
};

/** The result of `C`. */
type ConsoleResult<C extends ConsoleCommand> = ConsoleResults[C['kind']];

/** What the running side knows of the lot, never taken from the command: where replays go and which header counts retries. */
type LotSettings = { readonly workQueue: string; readonly retryHeader: string };

/** The filter fields of a request (query or JSON body), checked as {@link filterFromRequest} checks them; nothing else of it. */
function filterFields(input: URLSearchParams | Readonly<Record<string, unknown>>): FilterFields {
  filterFromRequest(input);
  const fields: Record<string, string | string[]> = {};
  const names = input instanceof URLSearchParams ? [...new Set(input.keys())] : Object.keys(input);
  for (const name of names.filter(isFilterName)) {
    const raw = input instanceof URLSearchParams ? input.getAll(name) : input[name];
    // Checked above: text, or a list of text (an empty value is no filter, as there).
    if (typeof raw === 'string' || Array.isArray(raw)) fields[name] = raw as string | string[];
  }
  return fields;
}

/**
 * Runs `command` on the lot of `ctx`. `tally` carries a replay on across slices (the operator
 * function runs long replays in parts); each slice counts from where the last stopped.
 * @example await runConsoleCommand(ctx, { kind: 'groups', nowMs: Date.now() }, { workQueue: 'orders', retryHeader: 'x-retry-count' })
 */
async function runConsoleCommand<C extends ConsoleCommand>(
  ctx: CommandContext,
  command: C,
  lot: LotSettings,
  tally: ReplayTally = newTally(),
): Promise<ConsoleResult<C>> {
  const c = command as ConsoleCommand;
  switch (c.kind) {
    case 'groups':
      return (await groupParked({ ...ctx, now: () => c.nowMs })) as ConsoleResult<C>;
    case 'messages':
      return (await readMessageList({ ...ctx, now: () => c.nowMs }, filterFromRequest(c.filter), c.limit)) as ConsoleResult<C>;
    case 'message':
      return (await readMessageDetail(ctx, c.pick, lot.retryHeader)) as ConsoleResult<C>;
    case 'replay': {
      const r = await replayParked(
        ctx,
        {
          filter: filterFromRequest(c.filter),
          limit: c.limit,
          workQueue: lot.workQueue,
          keepCount: false,
          dryRun: false,
          ratePerSecond: c.ratePerSecond,
          retryHeader: lot.retryHeader,
        },
        tally,
      );
      const { byQueue, unroutable, ...rest } = r;
      return { ...rest, byQueue: Object.fromEntries(byQueue), unroutable: Object.fromEntries(unroutable) } satisfies ConsoleReplayResult as ConsoleResult<C>;
    }
    case 'purge':
      return (await purgeParked(ctx, { filter: filterFromRequest(c.filter), limit: c.limit, dryRun: false })) as ConsoleResult<C>;
    case 'edit-replay':
      return (await editAndReplay(ctx, {
        messageId: c.messageId,
        edit: parseMessageEdit(c.edit, lot.retryHeader),
        retryHeader: lot.retryHeader,
        workQueue: lot.workQueue,
      })) as ConsoleResult<C>;
    default:
      throw new ConsoleInputError(
        `no console command ${JSON.stringify((c as { kind?: unknown }).kind)}: expected groups, messages, message, replay, purge or edit-replay (is the console newer than the operator function?)`,
      );
  }
}

export { filterFields, runConsoleCommand };
export type { ConsoleCommand, ConsoleResult };
