import type { WalkResult } from '../parked/context.js';
import type { FailureGroup } from '../parked/groups.js';
import {
  type DescribeResponse,
  type LotTarget,
  type PurgeSliceResponse,
  type ReadResponse,
  type ReplaySliceResponse,
  replayResultFromJson,
  tallyToJson,
  type WalkReport,
} from '../parked/operator-protocol.js';
import { DEFAULT_SLICE_MS, MAX_PAGE_BYTES } from '../parked/operator-function.js';
import { fetchPages } from '../parked/output-window.js';
import { createProgress, type Progress } from '../parked/progress.js';
import { newTally } from '../parked/replay.js';
import type { WalkCounts } from '../parked/walk.js';
import { GuardedOutput } from '../observability/guarded-output.js';
import { type Invoke, OperatorFunctionError } from './lambda-invoker.js';
import type { ParkedLot } from './parked-lot.js';

/** Options of {@link remoteLot}. */
type RemoteLotOptions = {
  /** The function's name or ARN, as errors name it. */
  readonly name: string;
  /** The most output bytes one answer carries (a read's page). @default 4 MiB, the most the function sends */
  readonly pageBytes?: number;
  /** How long one slice of replay or purge runs before it answers (it runs on while it holds a message it must give back in order). @default 20 000 */
  readonly sliceMs?: number;
};

/** A read's result as the direct command returns it: the report's counts and how the walk ended. */
function walkResult(report: WalkReport): WalkResult {
  return { ...report.counts, ending: report.ending };
}

/** The direct command's last report line, on stderr. */
function printReport(report: WalkReport): void {
  createProgress({ label: report.label, details: () => report.details }).stop(report.counts);
}

/**
 * The lot the operator function `options.name` serves, through `invoke`: each command as the direct
 * CLI runs it, with the same rows and report. A read is fetched in pages of `pageBytes`, each a whole
 * walk of the lot, joined and checked against the output's length and SHA-256 (a lot that changed
 * between two pages is an error, never a cut); replay and purge run in slices of `sliceMs`, the
 * progress going on across them.
 * @example const lot = await remoteLot(lambdaInvoker('orders-operator'), { function: 'orders' }, { name: 'orders-operator' });
 */
async function remoteLot(invoke: Invoke, target: LotTarget, options: RemoteLotOptions): Promise<ParkedLot> {
  const pageBytes = options.pageBytes ?? MAX_PAGE_BYTES;
  const sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS;
  const described = (await invoke({ ...target, op: 'describe' })) as DescribeResponse;
  const stdout = GuardedOutput.of(process.stdout);

  /** Every page of a read's output, joined and checked. */
  const read = async (op: 'list' | 'groups' | 'show', request: object): Promise<{ report: WalkReport; output: Buffer; matched: number }> => {
    const nowMs = Date.now();
    try {
      const { output, last } = await fetchPages((offset, first: ReadResponse | undefined) => {
        const pinned = first === undefined ? request : { ...request, options: { ...(request as { options: object }).options, readCounts: first.readCounts } };
        return invoke({ ...target, ...pinned, op, nowMs, page: { offset, bytes: pageBytes } }) as Promise<ReadResponse>;
      });
      return { report: last.report, output, matched: last.matched };
    } catch (error) {
      // A page that does not fit the others is the function's answer to this command: named with it.
      if ((error as Error).name !== 'Error') throw error;
      throw new OperatorFunctionError(`${op} through ${options.name}: ${(error as Error).message}`, { cause: error });
    }
  };

  /**
   * Runs slices until one says there is no more, reporting the counts across them as one walk.
   * Ctrl-C once: no slice after the one running (which finishes in the function); twice: exit at once.
   */
  const sliced = async <T extends { readonly report: WalkReport; readonly more: boolean }>(
    slice: (before: WalkCounts | undefined) => Promise<T>,
  ): Promise<T> => {
    let progress: Progress | undefined;
    let details = '';
    let before: WalkCounts | undefined;
    let stopping = false;
    const onSigint = (): void => {
      if (stopping) process.exit(130);
      stopping = true;
      GuardedOutput.of(process.stderr).write('\nstopping after the slice the function is running (Ctrl-C again to quit at once; nothing is lost either way)\n');
    };
    process.on('SIGINT', onSigint);
    try {
      for (;;) {
        const answer = await slice(before);
        details = answer.report.details;
        progress ??= createProgress({ label: answer.report.label, details: () => details });
        progress.update(answer.report.counts);
        before = answer.report.counts;
        if (!answer.more || stopping) {
          progress.stop(answer.report.counts);
          if (answer.report.ending === 'aborted')
            GuardedOutput.of(process.stderr).write(`the operator function ${options.name} ran out of time: run the command again to carry on\n`);
          // Stopped between two slices: what the direct command says after Ctrl-C.
          return answer.more ? { ...answer, report: { ...answer.report, ending: 'aborted' } } : answer;
        }
      }
    } finally {
      process.off('SIGINT', onSigint);
    }
  };

  return {
    queue: described.queue,
    async list(listOptions) {
      const { report, output, matched } = await read('list', { options: listOptions });
      stdout.write(output.toString('utf8'));
      printReport(report);
      return { ...walkResult(report), matched };
    },
    async groups(filter) {
      const { report, output } = await read('groups', { filter });
      printReport(report);
      return { ...walkResult(report), groups: JSON.parse(output.toString('utf8')) as FailureGroup[] };
    },
    async show(showOptions) {
      const { report, output, matched } = await read('show', { options: showOptions });
      stdout.write(output.toString('utf8'));
      printReport(report);
      return { ...walkResult(report), found: matched };
    },
    async replay(replayOptions) {
      let tally = tallyToJson(newTally());
      const last = await sliced(async (before) => {
        const answer = (await invoke({ ...target, op: 'replay', options: replayOptions, tally, slice: { sliceMs, before } })) as ReplaySliceResponse;
        tally = answer.tally;
        return answer;
      });
      return replayResultFromJson(last.result, last.report);
    },
    async purge(purgeOptions) {
      let selected = 0;
      const last = await sliced(async (before) => {
        const limit = purgeOptions.limit === undefined ? undefined : purgeOptions.limit - selected;
        const answer = (await invoke({ ...target, op: 'purge', options: { ...purgeOptions, limit }, slice: { sliceMs, before } })) as PurgeSliceResponse;
        selected += answer.result.selected;
        return answer;
      });
      return { ...walkResult(last.report), selected };
    },
  };
}

export { remoteLot };
