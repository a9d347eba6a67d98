/**
 * The operator function: the parking lot's commands for an operator outside the broker's network
 * (console/operator-console.ts adds the console's and is what the construct bundles). The CDK construct
 * deploys one per construct, in the broker's network, invoked only through IAM
 * (`lambda:InvokeFunction`: no URL); `boomerang parked … --remote <function>` drives it with the
 * operator's own AWS credentials (shared/cli/remote-lot.ts). Each invocation runs one engine command
 * (list, groups, show, replay, purge: the same code as the direct CLI) on its own connection, and
 * answers within Lambda's 6 MB: reads as pages of their output, replay and purge in slices
 * (operator-protocol.ts says how).
 */
import type { Config } from '../config/config.js';
import type { Env } from '../config/env.js';
import { ConfigError, ParkedCommandError } from '../errors.js';
import type { Mode } from '../queues/deploy-options.js';
import type { CommandContext, WalkResult } from './context.js';
import { groupParked } from './groups.js';
import { listParked } from './list.js';
import {
  addCounts,
  type DescribeResponse,
  type LotTarget,
  type OperatorRequest,
  type PageRequest,
  type PurgeSliceResponse,
  type ReadResponse,
  type ReplaySliceResponse,
  replayResultToJson,
  tallyFromJson,
  tallyToJson,
  type WalkReport,
} from './operator-protocol.js';
import { OutputWindow } from './output-window.js';
import type { Progress } from './progress.js';
import { purgeParked } from './purge.js';
import { replayParked } from './replay.js';
import { withParkingLot } from './session.js';
import { showParked } from './show.js';
import type { WalkCounts } from './walk.js';

/** What the function needs of a declared queue (`queue` of its file in functions/). */
type OperatorQueue = { readonly name: string; readonly loadConfig: (env: Env, mode?: Mode) => Config };

type OperatorFunctionOptions = {
  /** @default process.env */
  readonly env?: Env;
};

/** The part of the Lambda context the function reads. */
type OperatorContext = { getRemainingTimeInMillis(): number };

/**
 * The largest page a read returns: its base64 (4/3 of it) and the rest of the answer stay within
 * Lambda's 6 MB response. A request may ask for less (the tests ask for 64 KiB).
 */
const MAX_PAGE_BYTES = 4 * 1024 * 1024;

/** Stop a walk this long before Lambda's timeout: the message in hand is settled and the answer sent. */
const STOP_BEFORE_TIMEOUT_MS = 10_000;

/**
 * How long the CLI asks one slice of a replay or purge to run: short enough that the progress moves
 * and Ctrl-C is heard within it, long enough that an invocation's start is a small part of it.
 */
const DEFAULT_SLICE_MS = 20_000;

/** The longest slice a request may ask for: the rest of the function's time is its margin. */
const MAX_SLICE_MS = 5 * 60_000;

/** Keeps a walk's report (label, counts, words) instead of printing it; rows go to the output window. */
class Reporter {
  private label = '';
  private details: (counts: Readonly<WalkCounts>) => string = () => '';
  private last: WalkCounts = { total: 0, visited: 0, kept: 0, moved: 0, deleted: 0, notMoved: 0 };

  public constructor(private readonly window?: OutputWindow) {}

  public readonly progress = (label: string, details: (counts: Readonly<WalkCounts>) => string): Progress => {
    this.label = label;
    this.details = details;
    return {
      update: (counts) => {
        this.last = { ...counts };
      },
      print: (line) => this.window?.write(`${line}\n`),
      stop: (counts) => {
        this.last = { ...counts };
      },
    };
  };

  /** The report of the slices so far: `before`, then this walk. */
  public report(result: WalkResult, before?: WalkCounts): WalkReport {
    const counts = addCounts(before, this.last);
    return { label: this.label, counts, details: this.details(counts), ending: result.ending };
  }
}

/**
 * The declared queue and parking lot a request names: `function` by name, `parkingQueue` by its lot,
 * else the only queue. Only the declared lots: the function holds the broker credentials, and its
 * invoker may act on the lots of its construct, not on any queue of the broker.
 */
function lotOf(queues: readonly OperatorQueue[], target: LotTarget, env: Env): { config: Config; queue: string } {
  const names = queues.map((q) => q.name).join(', ');
  const configs = queues.map((q) => ({ name: q.name, config: q.loadConfig(env, 'pull') }));
  let found: { name: string; config: Config } | undefined;
  if (target.function !== undefined) {
    found = configs.find((q) => q.name === target.function);
    if (found === undefined) throw new ConfigError(`--function ${target.function}: the operator function serves no such queue; it serves ${names}`);
  } else if (target.parkingQueue !== undefined) {
    found = configs.find((q) => q.config.parkingQueue === target.parkingQueue);
  } else if (configs.length === 1) {
    found = configs[0];
  } else {
    throw new ConfigError(`say which queue: --function <name> (the operator function serves ${names})`);
  }
  if (found === undefined || (target.parkingQueue !== undefined && found.config.parkingQueue !== target.parkingQueue)) {
    throw new ConfigError(
      `--parking-queue ${target.parkingQueue}: the operator function serves the parking lots ${configs.map((q) => `${q.config.parkingQueue} (${q.name})`).join(', ')} only`,
    );
  }
  return { config: found.config, queue: found.config.parkingQueue };
}

/** The output window a read's page request asks for: at most {@link MAX_PAGE_BYTES}. */
function pageOf(page: PageRequest | undefined): OutputWindow {
  return new OutputWindow(Math.max(0, page?.offset ?? 0), Math.min(MAX_PAGE_BYTES, Math.max(1, page?.bytes ?? MAX_PAGE_BYTES)));
}

/**
 * Runs commands on the lot `queue` in the parked CLI's session, each on its own connection, stopping
 * a walk {@link STOP_BEFORE_TIMEOUT_MS} before the invocation's time is up; `resume` as `withParkingLot`'s.
 */
function operatorSession(
  config: Config,
  queue: string,
  context?: OperatorContext,
): <T>(run: (ctx: CommandContext) => Promise<T>, resume?: boolean) => Promise<T> {
  const timeUp = context === undefined ? undefined : AbortSignal.timeout(Math.max(1000, context.getRemainingTimeInMillis() - STOP_BEFORE_TIMEOUT_MS));
  return (run, resume = false) =>
    withParkingLot(
      config,
      queue,
      (ctx) => run({ ...ctx, signal: ctx.signal === undefined || timeUp === undefined ? (timeUp ?? ctx.signal) : AbortSignal.any([ctx.signal, timeUp]) }),
      { connectionName: 'boomerang-operator', resume },
    );
}

/**
 * The Lambda handler of the operator function, serving every queue of `queues` (the construct's).
 * @example
 * import { queue as orders } from './functions/orders.js';
 * import { queue as webhooks } from './functions/webhooks.js';
 * export const handler = createOperatorFunction([orders, webhooks]);
 */
function createOperatorFunction(
  queues: readonly OperatorQueue[],
  options: OperatorFunctionOptions = {},
): (event: OperatorRequest, context?: OperatorContext) => Promise<unknown> {
  if (queues.length === 0) throw new ConfigError("The operator function serves no queue: give it the declared queues (each file's `queue`)");
  const env = options.env ?? process.env;
  return async (event, context) => {
    const { config, queue } = lotOf(queues, event, env);
    const session = operatorSession(config, queue, context);
    switch (event.op) {
      case 'describe':
        return { queue, workQueue: config.workQueue, retryHeader: config.retryHeader } satisfies DescribeResponse;
      case 'list': {
        const window = pageOf(event.page);
        const reporter = new Reporter(window);
        const result = await session((ctx) => listParked({ ...ctx, now: () => event.nowMs, progress: reporter.progress }, event.options));
        return { report: reporter.report(result), page: window.page(), matched: result.matched } satisfies ReadResponse;
      }
      case 'show': {
        const window = pageOf(event.page);
        const reporter = new Reporter(window);
        const result = await session((ctx) => showParked({ ...ctx, now: () => event.nowMs, progress: reporter.progress }, event.options));
        // Later pages show the read counts of the first (passed back in `options.readCounts`), so every page is of one output.
        return {
          report: reporter.report(result),
          page: window.page(),
          matched: result.found,
          readCounts: event.options.readCounts ?? result.readCounts,
        } satisfies ReadResponse;
      }
      case 'groups': {
        const window = pageOf(event.page);
        const reporter = new Reporter();
        const result = await session((ctx) => groupParked({ ...ctx, now: () => event.nowMs, progress: reporter.progress }, event.filter));
        // The groups are data the CLI prints as the direct command does; paged like any output.
        window.write(JSON.stringify(result.groups));
        return { report: reporter.report(result), page: window.page(), matched: result.groups.reduce((sum, g) => sum + g.count, 0) } satisfies ReadResponse;
      }
      case 'replay': {
        const { sliceOver, reporter } = sliceOf(event.slice);
        const tally = tallyFromJson(event.tally);
        const replayOptions = { ...event.options, workQueue: config.workQueue, retryHeader: config.retryHeader };
        const result = await session((ctx) => replayParked({ ...ctx, sliceOver, progress: reporter.progress }, replayOptions, tally), !event.options.dryRun);
        const more = result.ending === 'early' && sliceOver() && tally.selected < (event.options.limit ?? Number.POSITIVE_INFINITY);
        return {
          report: reporter.report(result, event.slice.before),
          result: replayResultToJson(result),
          tally: tallyToJson(tally),
          more,
        } satisfies ReplaySliceResponse;
      }
      case 'purge': {
        const { sliceOver, reporter } = sliceOf(event.slice);
        const result = await session((ctx) => purgeParked({ ...ctx, sliceOver, progress: reporter.progress }, event.options));
        const more = result.ending === 'early' && sliceOver() && result.selected < (event.options.limit ?? Number.POSITIVE_INFINITY);
        return { report: reporter.report(result, event.slice.before), result: { selected: result.selected }, more } satisfies PurgeSliceResponse;
      }
      default:
        throw new ParkedCommandError(
          `the operator function has no op ${JSON.stringify((event as { op?: unknown }).op)}: expected describe, list, groups, show, replay or purge (is the CLI newer than the deployed function?)`,
        );
    }
  };
}

/** A slice's clock: over once `sliceMs` (at most {@link MAX_SLICE_MS}) has passed. */
function sliceOf(slice: { readonly sliceMs: number }): { sliceOver: () => boolean; reporter: Reporter } {
  return { sliceOver: sliceClock(slice.sliceMs), reporter: new Reporter() };
}

/** Over once `sliceMs` (at most {@link MAX_SLICE_MS}) has passed from now. */
function sliceClock(sliceMs: number): () => boolean {
  const endsAt = Date.now() + Math.min(MAX_SLICE_MS, Math.max(0, sliceMs));
  return () => Date.now() >= endsAt;
}

export { createOperatorFunction, DEFAULT_SLICE_MS, lotOf, MAX_PAGE_BYTES, operatorSession, pageOf, sliceClock };
export type { OperatorContext, OperatorFunctionOptions, OperatorQueue };
