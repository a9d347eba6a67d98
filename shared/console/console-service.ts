import type { WalkCounts } from '../parked/walk.js';
import { groupsReport, type GroupsReport } from '../parked/groups.js';
import { describeFilter, EVERYTHING } from '../parked/filters.js';
import { redactText } from '../observability/redact.js';
import type { ConsoleBroker } from './console-broker.js';
import { type ConsoleCommand, type ConsoleResult, filterFields } from './console-command.js';
import { type ConsoleQueue, policyView } from './console-queue.js';
import { ConsoleInputError, QueueNotDeclaredError } from './errors.js';
import { JobRegistry, type Job } from './jobs.js';
import { type NativeCounts, nativeCountsOrWhy, nativeCountsView } from './native-counts.js';
import { parseMessageEdit } from './message-edit.js';
import type { MessagePick } from './parked-reads.js';
import { QueueLock } from './queue-lock.js';
import { confirmedCount, filterFromRequest } from './request-filter.js';

/** Options of {@link ConsoleService}. */
type ConsoleServiceOptions = {
  readonly queues: readonly ConsoleQueue[];
  readonly broker: ConsoleBroker;
  /** `RETRY_HEADER`: reset on replay. */
  readonly retryHeader: string;
  /** Replay rate when a request names none, in messages per second. @default 50 */
  readonly defaultReplayRatePerSecond?: number;
  /** Messages a group's list shows at most (all are still counted). @default 200 */
  readonly listLimit?: number;
};

/** A group report and when the walk behind it ran. */
type CachedGroups = GroupsReport & { readonly readAt: string };

/** The highest rate a request may ask for: the walk confirms one message at a time anyway. */
const MAX_RATE_PER_SECOND = 10_000;

/**
 * What the console's API does, without HTTP: reads (overview, groups, messages, one message) and
 * actions (replay, purge, edit and replay) run as jobs. Every walk of a parking lot goes through
 * the parked CLI's functions, one at a time per queue.
 */
class ConsoleService {
  public readonly jobs = new JobRegistry();
  private readonly lock = new QueueLock();
  private readonly groupCache = new Map<string, CachedGroups>();

  public constructor(private readonly options: ConsoleServiceOptions) {}

  /**
   * Depth of each work queue, delay queue and parking lot, and the oldest parked message (from the
   * last grouping walk); a native work queue's messages apart (`work.native`). Each queue on its own:
   * one without topology yet, or whose lot cannot be read, is shown as such (`missing` and
   * `applyCommand`, or `problem`) next to the queues that work.
   */
  public async overview(): Promise<Record<string, unknown>> {
    const names = this.options.queues.flatMap((q) => [q.workQueue, ...q.delayQueues, q.parkingQueue]);
    const native = this.options.queues.filter((q) => q.native).map((q) => q.workQueue);
    const [depths, counts] = await Promise.all([this.options.broker.depths(names), nativeCountsOrWhy(this.options.broker, native)]);
    const queues = [];
    for (const q of this.options.queues) queues.push(await this.queueOverview(q, depths, counts));
    return { broker: this.options.broker.endpoint, queues };
  }

  /**
   * The failure groups of a queue's parking lot: the last walk's while the lot holds as many messages
   * as it did then, else (or with `refresh`, or none yet, or an action ran since) a new walk: a park or
   * a deletion since is never hidden behind an old read. `depth` is the lot's count when the caller
   * has just read it (the overview reads every queue's at once), else it is read here.
   */
  public async groups(queueName: string, refresh: boolean, depth?: number | null): Promise<CachedGroups> {
    const queue = this.queue(queueName);
    const cached = this.groupCache.get(queue.parkingQueue);
    if (cached !== undefined && !refresh) {
      const now = depth !== undefined ? depth : (await this.options.broker.depths([queue.parkingQueue])).get(queue.parkingQueue);
      if (now === cached.parked) return cached;
    }
    const result = await this.walk(queue, { kind: 'groups', nowMs: Date.now() });
    const report = { ...groupsReport(queue.parkingQueue, result), readAt: new Date().toISOString() };
    this.groupCache.set(queue.parkingQueue, report);
    return report;
  }

  /** The parked messages that match the request's filters (the CLI's names), at most `listLimit` of them. */
  public async messages(queueName: string, params: URLSearchParams): Promise<Record<string, unknown>> {
    const queue = this.queue(queueName);
    const filter = filterFromRequest(params);
    const limit = this.options.listLimit ?? 200;
    const { messages, matched } = await this.walk(queue, { kind: 'messages', filter: filterFields(params), limit, nowMs: Date.now() });
    return { filter: describeFilter(filter), matched, shown: messages.length, messages };
  }

  /** One parked message in full, by its id or (one without an id) by its position and body hash; null when it is not there. */
  public async message(queueName: string, pick: MessagePick): Promise<Record<string, unknown> | null> {
    const queue = this.queue(queueName);
    return (await this.walk(queue, { kind: 'message', pick })).message;
  }

  /**
   * Replays the messages the body's filters select (a group: `{ group }`; one message: `{ "message-id" }`),
   * rate-limited, at most `expectedCount`: the count the operator confirmed, so messages parked since
   * then are never replayed unseen.
   */
  public replay(queueName: string, body: Readonly<Record<string, unknown>>): Job {
    const queue = this.queue(queueName);
    const filter = filterFromRequest(body);
    const limit = confirmedCount(body);
    const ratePerSecond = body.ratePerSecond ?? this.options.defaultReplayRatePerSecond ?? 50;
    if (typeof ratePerSecond !== 'number' || !(ratePerSecond > 0 && ratePerSecond <= MAX_RATE_PER_SECOND)) {
      throw new ConsoleInputError(`ratePerSecond must be a number above 0 and at most ${MAX_RATE_PER_SECOND}; got ${JSON.stringify(ratePerSecond)}`);
    }
    return this.action(
      'replay',
      `${describeFilter(filter)} of ${queue.parkingQueue}`,
      queue,
      { kind: 'replay', filter: filterFields(body), limit, ratePerSecond },
      (r) => ({
        selected: r.selected,
        noSource: r.noSource,
        byQueue: r.byQueue,
        unroutable: r.unroutable,
        refused: r.refused,
        unsendable: r.unsendable,
        ending: r.ending,
      }),
    );
  }

  /**
   * Deletes the messages the body's filters select, at most `expectedCount`: the count the operator
   * confirmed, so messages parked since then are never deleted unseen.
   */
  public purge(queueName: string, body: Readonly<Record<string, unknown>>): Job {
    const queue = this.queue(queueName);
    const filter = filterFromRequest(body);
    const expected = confirmedCount(body);
    if (filter === EVERYTHING || describeFilter(filter) === 'all messages')
      throw new ConsoleInputError('purge needs a filter (a group, an error name...): the console never deletes a whole parking lot');
    return this.action(
      'purge',
      `${describeFilter(filter)} of ${queue.parkingQueue}`,
      queue,
      { kind: 'purge', filter: filterFields(body), limit: expected },
      (r) => ({ selected: r.selected, deleted: r.deleted, ending: r.ending }),
    );
  }

  /**
   * Replays one parked message with the body's changes applied (`{ body?, headers?: { set?, remove? } }`),
   * with an audit header; an edit that changes nothing is a plain replay (`edited: false`).
   */
  public editReplay(queueName: string, messageId: string, body: unknown): Job {
    const queue = this.queue(queueName);
    // Checked here, so a bad edit is the request's error (400); the walk parses it again where it runs.
    parseMessageEdit(body, this.options.retryHeader);
    return this.action(
      'edit-replay',
      `message ${JSON.stringify(messageId)} of ${queue.parkingQueue}`,
      queue,
      { kind: 'edit-replay', messageId, edit: body },
      (r) => ({ found: r.found, replayedTo: r.replayedTo, edited: r.edited, refused: r.refused, ending: r.ending }),
    );
  }

  private async queueOverview(
    q: ConsoleQueue,
    depths: ReadonlyMap<string, number | null>,
    counts: ReadonlyMap<string, NativeCounts>,
  ): Promise<Record<string, unknown>> {
    const depth = (name: string): number | null => depths.get(name) ?? null;
    const missing = [q.workQueue, ...q.delayQueues, q.parkingQueue].filter((name) => depth(name) === null);
    let groups: CachedGroups | undefined;
    let problem: string | null = null;
    if (depth(q.parkingQueue) !== null) {
      try {
        groups = await this.groups(q.name, false, depth(q.parkingQueue));
      } catch (error) {
        const e = error as Error;
        problem = redactText(`${e.name}: ${e.message}`);
      }
    }
    const oldest =
      groups?.groups
        .map((g) => g.firstSeen)
        .filter((t): t is string => t !== null)
        .sort()[0] ?? null;
    return {
      name: q.name,
      work: {
        name: q.workQueue,
        depth: depth(q.workQueue),
        native: q.native ? nativeCountsView(counts.get(q.workQueue), depth(q.workQueue), Date.now()) : null,
      },
      delays: q.delayQueues.map((name) => ({ name, depth: depth(name) })),
      parking: {
        name: q.parkingQueue,
        depth: depth(q.parkingQueue),
        oldestParkedAt: oldest,
        groups: groups?.groups.length ?? null,
        readAt: groups?.readAt ?? null,
      },
      missing,
      applyCommand: missing.length > 0 ? q.applyCommand : null,
      problem,
      policy: policyView(q),
    };
  }

  private action<C extends ConsoleCommand>(kind: string, label: string, queue: ConsoleQueue, command: C, shown: (result: ConsoleResult<C>) => unknown): Job {
    return this.jobs.start(kind, label, (onCounts) =>
      this.walk(queue, command, onCounts)
        .then(shown)
        .finally(() => this.groupCache.delete(queue.parkingQueue)),
    );
  }

  private walk<C extends ConsoleCommand>(queue: ConsoleQueue, command: C, onCounts?: (counts: Readonly<WalkCounts>) => void): Promise<ConsoleResult<C>> {
    return this.lock
      .run(queue.parkingQueue, () => this.options.broker.walk(queue, command, onCounts))
      .catch((error: unknown) => this.explainMissing(queue, error));
  }

  /** A walk that failed on a parking lot that is not there says so with the command that declares it, not the CLI's flags. */
  private async explainMissing(queue: ConsoleQueue, error: unknown): Promise<never> {
    if ((error as Error | undefined)?.name === 'ParkedCommandError') {
      const depths = await this.options.broker.depths([queue.parkingQueue]).catch(() => undefined);
      if (depths !== undefined && (depths.get(queue.parkingQueue) ?? null) === null) {
        throw new QueueNotDeclaredError(
          `there is no queue ${JSON.stringify(queue.parkingQueue)}: the topology of ${queue.name} is not declared yet; run ${queue.applyCommand}`,
          { cause: error },
        );
      }
    }
    throw error;
  }

  private queue(name: string): ConsoleQueue {
    const queue = this.options.queues.find((q) => q.name === name);
    if (queue === undefined)
      throw new ConsoleInputError(`no queue ${JSON.stringify(name)} in this console; it shows ${this.options.queues.map((q) => q.name).join(', ')}`);
    return queue;
  }
}

export { ConsoleService };
