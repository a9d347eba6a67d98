import { Selection, walkReported, type CommandContext, type WalkResult } from './context.js';
import { EVERYTHING, type ParkedFilter } from './filters.js';
import { groupKeyOf, normaliseErrorMessage } from './normalise.js';
import { parkedViewOf } from './park-notes.js';
import type { ParkedView } from './parked-view.js';

/** Parked messages with one cause: error name, normalised error message and source queue. */
type FailureGroup = {
  /** Pass it to `--group` (CLI) or the console's group actions to act on exactly these messages. */
  readonly key: string;
  readonly errorName: string | null;
  /** The error message with numbers, ids and URLs collapsed (see `normaliseErrorMessage`). */
  readonly message: string;
  readonly sourceQueue: string | null;
  readonly count: number;
  /** ISO time of the earliest and latest park in the group; null when none carried a park time. */
  readonly firstSeen: string | null;
  readonly lastSeen: string | null;
  /** The first message of the group in queue order, as it was. */
  readonly sample: { readonly messageId: string | null; readonly errorMessage: string | null };
  /**
   * Parks per hour over the last 24 hours before the walk, oldest first (the last is the hour before
   * it): is the failure still happening? A park older than that, or in the future, is not counted here.
   */
  readonly lastDayByHour: readonly number[];
};

/** The hours `lastDayByHour` covers. */
const HOURS = 24;

/** Distinct groups held at most; past it, further causes are counted in one overflow group, so memory stays bounded. */
const MAX_GROUPS = 1000;
const OVERFLOW_KEY = '(more causes than the console groups: narrow with filters)||';

type Tally = { -readonly [K in keyof FailureGroup]: FailureGroup[K] };

/**
 * Counts parked messages per failure group as they stream by: one entry per group (count, first and
 * last seen, the first message as a sample), whatever the number of messages.
 */
class GroupTally {
  private readonly groups = new Map<string, Tally>();

  /** `nowMs`: the end of the last hour `lastDayByHour` counts. */
  public constructor(private readonly nowMs: number = Date.now()) {}

  public add(view: ParkedView): void {
    let key = groupKeyOf(view);
    if (!this.groups.has(key) && this.groups.size >= MAX_GROUPS) key = OVERFLOW_KEY;
    const parkedAt = view.parkedAt?.toISOString() ?? null;
    const group = this.groups.get(key);
    if (group === undefined) {
      this.groups.set(key, {
        key,
        errorName: key === OVERFLOW_KEY ? null : (view.errorName ?? null),
        message: key === OVERFLOW_KEY ? '' : normaliseErrorMessage(view.errorMessage),
        sourceQueue: key === OVERFLOW_KEY ? null : (view.sourceQueue ?? null),
        count: 1,
        firstSeen: parkedAt,
        lastSeen: parkedAt,
        sample: { messageId: view.messageId ?? null, errorMessage: view.errorMessage ?? null },
        lastDayByHour: this.countedHour(
          Array.from({ length: HOURS }, () => 0),
          view.parkedAt,
        ),
      });
      return;
    }
    group.count++;
    this.countedHour(group.lastDayByHour as number[], view.parkedAt);
    // ISO times in UTC compare as text.
    if (parkedAt !== null && (group.firstSeen === null || parkedAt < group.firstSeen)) group.firstSeen = parkedAt;
    if (parkedAt !== null && (group.lastSeen === null || parkedAt > group.lastSeen)) group.lastSeen = parkedAt;
  }

  private countedHour(hours: number[], parkedAt: Date | undefined): number[] {
    if (parkedAt === undefined) return hours;
    const hoursAgo = Math.floor((this.nowMs - parkedAt.getTime()) / 3_600_000);
    if (hoursAgo >= 0 && hoursAgo < HOURS) hours[HOURS - 1 - hoursAgo] = (hours[HOURS - 1 - hoursAgo] as number) + 1;
    return hours;
  }

  /** The groups, largest first (ties by key, so the order is stable). */
  public result(): FailureGroup[] {
    return [...this.groups.values()].sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }
}

/** What {@link groupParked} returns: the walk's counts and the groups. */
type GroupsResult = WalkResult & { readonly groups: readonly FailureGroup[] };

/**
 * `groups`: the parked messages that match `filter`, grouped by cause, read by one walk that leaves
 * the parking lot as it was (order and delivery count kept). The CLI's `groups --json` and the
 * console's groups view both print what this returns.
 * @example
 * const { groups } = await withParkingLot(config, 'orders.parked', (ctx) => groupParked(ctx));
 * groups[0]; // { key: 'PartnerDown|HTTP <n>|orders', count: 120, firstSeen: '2026-11-24T00:01:00.000Z', ... }
 */
async function groupParked(ctx: CommandContext, filter: ParkedFilter = EVERYTHING): Promise<GroupsResult> {
  const nowMs = (ctx.now ?? Date.now)();
  const tally = new GroupTally(nowMs);
  const matching = new Selection(filter, Number.POSITIVE_INFINITY, nowMs);
  const progress = ctx.progress('groups', () => `${matching.selected} grouped`);
  const result = await walkReported(ctx, progress, {
    readOnly: true,
    visit: async (message) => {
      const view = await parkedViewOf(ctx.parkNotes, message);
      if (matching.take(view)) tally.add(view);
      return KEEP;
    },
  });
  return { ...result, groups: tally.result() };
}

const KEEP = { kind: 'keep' } as const;

/** What `parked groups --json` prints and the console's `/api/groups` returns: the same object for the same parking lot. */
type GroupsReport = {
  readonly queue: string;
  /** Messages in the parking lot when the walk started. */
  readonly parked: number;
  /** Of those, matched the filter (and so are counted in a group). */
  readonly grouped: number;
  readonly groups: readonly FailureGroup[];
};

/** The report of one grouping walk. */
function groupsReport(queue: string, result: GroupsResult): GroupsReport {
  return { queue, parked: result.total, grouped: result.groups.reduce((sum, g) => sum + g.count, 0), groups: result.groups };
}

/** The groups as a text table for the terminal: count, first and last seen, error, message, source queue, then the key to pass to `--group`. */
function groupsTable(report: GroupsReport): string {
  const rows = report.groups.map((g) => [String(g.count), g.firstSeen ?? '-', g.lastSeen ?? '-', g.errorName ?? '-', g.message || '-', g.sourceQueue ?? '-']);
  const head = ['COUNT', 'FIRST SEEN', 'LAST SEEN', 'ERROR', 'MESSAGE', 'SOURCE'];
  const widths = head.map((h, i) => Math.min(60, Math.max(h.length, ...rows.map((r) => (r[i] as string).length))));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (c.length > (widths[i] as number) ? `${c.slice(0, (widths[i] as number) - 1)}…` : c.padEnd(widths[i] as number)))
      .join('  ')
      .trimEnd();
  const keys = report.groups.map((g, i) => `  ${i + 1}. --group ${JSON.stringify(g.key)}`);
  return [line(head), ...rows.map(line), '', 'Keys (for list, replay and purge):', ...keys].join('\n');
}

export { groupParked, groupsReport, groupsTable, GroupTally, MAX_GROUPS };
export type { FailureGroup, GroupsReport, GroupsResult };
