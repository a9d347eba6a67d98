/**
 * What the CLI and the operator function (operator-function.ts) say to each other through Lambda's
 * Invoke: JSON requests and responses, each within Lambda's 6 MB. A read (`list`, `groups`, `show`)
 * walks the whole lot in one invocation (a read stopped half-way would rotate a quorum lot) and returns
 * one page of its output; `replay` and `purge` run in slices that each stop when their time is up and
 * nothing is held, and the next slice carries on with what is left (what was done left the lot).
 */
import type { ParkedFilter } from './filters.js';
import type { ListOptions } from './list.js';
import type { OutputPage } from './output-window.js';
import type { PurgeOptions } from './purge.js';
import type { Refusal, ReplayOptions, ReplayResult, ReplayTally, Unsendable } from './replay.js';
import type { ReadCounts, ShowOptions } from './show.js';
import type { WalkCounts, WalkEnding } from './walk.js';

/** Which lot: a declared queue by name (`--function`), else the only one the function serves; `--parking-queue` names the lot itself. */
type LotTarget = { readonly function?: string; readonly parkingQueue?: string };

/** The page a read returns: `bytes` of its output from `offset`. */
type PageRequest = { readonly offset: number; readonly bytes: number };

/** One invocation's request. `nowMs` is the CLI's clock, so every page of a read says the same ages. */
type OperatorRequest = LotTarget &
  (
    | { readonly op: 'describe' }
    | { readonly op: 'list'; readonly options: ListOptions; readonly nowMs: number; readonly page: PageRequest }
    | { readonly op: 'groups'; readonly filter: ParkedFilter; readonly nowMs: number; readonly page: PageRequest }
    | { readonly op: 'show'; readonly options: ShowOptions; readonly nowMs: number; readonly page: PageRequest }
    | { readonly op: 'replay'; readonly options: Omit<ReplayOptions, 'workQueue' | 'retryHeader'>; readonly tally: TallyJson; readonly slice: SliceRequest }
    | { readonly op: 'purge'; readonly options: PurgeOptions; readonly slice: SliceRequest }
  );

/** A slice of a replay or purge: its time, and the counts of the slices before it. */
type SliceRequest = {
  /** Stop once this long has passed and nothing is held. */
  readonly sliceMs: number;
  /** What the slices before did (their report goes on from these); undefined for the first. */
  readonly before?: WalkCounts;
};

/** The walk's report, as the CLI's progress prints it: its label, its counts so far and their words. */
type WalkReport = { readonly label: string; readonly counts: WalkCounts; readonly details: string; readonly ending: WalkEnding };

/** What the function answers to each op. */
type DescribeResponse = { readonly queue: string; readonly workQueue: string; readonly retryHeader: string };
type ReadResponse = {
  readonly report: WalkReport;
  readonly page: OutputPage;
  readonly matched: number;
  /** `show`: the read counts of the copies shown, for the next pages to show (`ShowOptions.readCounts`). */
  readonly readCounts?: readonly ReadCounts[];
};
type SliceResponse<T> = {
  readonly report: WalkReport;
  readonly result: T;
  /** The slice stopped because its time was up: there may be more to do. */
  readonly more: boolean;
};
type ReplaySliceResponse = SliceResponse<ReplayResultJson> & { readonly tally: TallyJson };
type PurgeSliceResponse = SliceResponse<{ readonly selected: number }>;

/** A {@link ReplayTally} as JSON (its maps as entries). */
type TallyJson = {
  readonly selected: number;
  readonly noSource: number;
  readonly sent: readonly (readonly [string, number])[];
  readonly unroutable: readonly (readonly [string, number])[];
  readonly refused: readonly Refusal[];
  readonly unsendable: readonly Unsendable[];
};

/** A {@link ReplayResult} less its walk counts (in the report), as JSON. */
type ReplayResultJson = Omit<TallyJson, 'sent'> & { readonly byQueue: readonly (readonly [string, number])[] };

function tallyToJson(tally: ReplayTally): TallyJson {
  return {
    selected: tally.selected,
    noSource: tally.noSource,
    sent: [...tally.sent],
    unroutable: [...tally.unroutable],
    refused: [...tally.refused],
    unsendable: [...tally.unsendable],
  };
}

function tallyFromJson(json: TallyJson): ReplayTally {
  return {
    selected: json.selected,
    noSource: json.noSource,
    sent: new Map(json.sent),
    unroutable: new Map(json.unroutable),
    refused: [...json.refused],
    unsendable: [...json.unsendable],
  };
}

function replayResultToJson(result: ReplayResult): ReplayResultJson {
  return {
    selected: result.selected,
    noSource: result.noSource,
    byQueue: [...result.byQueue],
    unroutable: [...result.unroutable],
    refused: result.refused,
    unsendable: result.unsendable,
  };
}

function replayResultFromJson(json: ReplayResultJson, report: WalkReport): ReplayResult {
  return {
    ...report.counts,
    ending: report.ending,
    selected: json.selected,
    noSource: json.noSource,
    byQueue: new Map(json.byQueue),
    unroutable: new Map(json.unroutable),
    refused: json.refused,
    unsendable: json.unsendable,
  };
}

/**
 * The counts of slices so far: `before` (the earlier slices) and this slice's. An earlier slice stopped
 * holding nothing, so what it visited left the lot: the count of the lot is the first slice's.
 */
function addCounts(before: WalkCounts | undefined, slice: Readonly<WalkCounts>): WalkCounts {
  if (before === undefined) return { ...slice };
  return {
    total: before.total,
    visited: before.visited + slice.visited,
    kept: slice.kept,
    moved: before.moved + slice.moved,
    deleted: before.deleted + slice.deleted,
    notMoved: before.notMoved + slice.notMoved,
  };
}

export { addCounts, replayResultFromJson, replayResultToJson, tallyFromJson, tallyToJson };
export type { DescribeResponse, LotTarget, OperatorRequest, PageRequest, PurgeSliceResponse, ReadResponse, ReplaySliceResponse, TallyJson, WalkReport };
