import { type ConsoleBroker, countsOf } from '../console/console-broker.js';
import type { ConsoleCommand, ConsoleResult } from '../console/console-command.js';
import type { NativeCounts } from '../console/native-counts.js';
import type { ConsoleActionResponse, ConsoleReadResponse, DepthsResponse } from '../console/operator-console.js';
import { DEFAULT_SLICE_MS, MAX_PAGE_BYTES } from '../parked/operator-function.js';
import { addCounts, type TallyJson } from '../parked/operator-protocol.js';
import { fetchPages } from '../parked/output-window.js';
import type { WalkCounts } from '../parked/walk.js';
import { type Invoke, OperatorFunctionError } from './lambda-invoker.js';

/** Options of {@link remoteConsoleBroker}. */
type RemoteConsoleOptions = {
  /** The function's name or ARN, as the console and its errors name it. */
  readonly name: string;
  /** The most bytes of a read's JSON one answer carries. @default 4 MiB, the most the function sends */
  readonly pageBytes?: number;
  /** How long one slice of a replay or purge runs before it answers. @default 20 000 */
  readonly sliceMs?: number;
};

/**
 * The console's broker through the operator function `options.name` (`boomerang console --remote`):
 * each walk is a command the function runs with the console's own code. A read comes in pages of
 * `pageBytes`, each a whole read of the lot, joined and checked against the output's length and
 * SHA-256 (a lot that changed between two pages is an error, never a cut); replay and purge run in
 * slices of `sliceMs`, their counts reported after each, merged into the result a direct walk gives.
 * @example const broker = remoteConsoleBroker(lambdaInvoker('orders-operator'), { name: 'orders-operator' });
 */
function remoteConsoleBroker(invoke: Invoke, options: RemoteConsoleOptions): ConsoleBroker {
  const pageBytes = options.pageBytes ?? MAX_PAGE_BYTES;
  const sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS;

  const read = async (parkingQueue: string, command: ConsoleCommand): Promise<Record<string, unknown>> => {
    try {
      const { output } = await fetchPages(
        (offset, first: ConsoleReadResponse | undefined) =>
          invoke({ op: 'console', parkingQueue, command, page: { offset, bytes: pageBytes }, readCounts: first?.readCounts }) as Promise<ConsoleReadResponse>,
      );
      return JSON.parse(output.toString('utf8')) as Record<string, unknown>;
    } catch (error) {
      if ((error as Error).name !== 'Error') throw error;
      throw new OperatorFunctionError(`${command.kind} through ${options.name}: ${(error as Error).message}`, { cause: error });
    }
  };

  const act = async (parkingQueue: string, command: ConsoleCommand, onCounts: (counts: Readonly<WalkCounts>) => void): Promise<Record<string, unknown>> => {
    let counts: WalkCounts | undefined;
    let tally: TallyJson | undefined;
    const purged = { selected: 0, deleted: 0 };
    for (;;) {
      // A purge's next slice takes what is left of the confirmed count; a replay's tally carries it.
      const sliced = command.kind === 'purge' ? { ...command, limit: command.limit - purged.selected } : command;
      const answer = (await invoke({ op: 'console', parkingQueue, command: sliced, tally, sliceMs })) as ConsoleActionResponse;
      counts = addCounts(counts, countsOf(answer.result));
      onCounts(counts);
      tally = answer.tally;
      purged.selected += Number(answer.result.selected ?? 0);
      purged.deleted += Number(answer.result.deleted ?? 0);
      if (!answer.more) return { ...answer.result, ...counts, ...(command.kind === 'purge' ? purged : {}) };
    }
  };

  return {
    endpoint: `the broker behind the operator function ${options.name}`,
    async walk<C extends ConsoleCommand>(
      lot: { readonly parkingQueue: string },
      command: C,
      onCounts: (counts: Readonly<WalkCounts>) => void = () => undefined,
    ): Promise<ConsoleResult<C>> {
      if (command.kind === 'groups' || command.kind === 'messages' || command.kind === 'message') {
        const result = await read(lot.parkingQueue, command);
        onCounts(countsOf(result));
        return result as ConsoleResult<C>;
      }
      return (await act(lot.parkingQueue, command, onCounts)) as ConsoleResult<C>;
    },
    async check() {
      await invoke({ op: 'check' });
    },
    async depths(queues) {
      return new Map(((await invoke({ op: 'depths', queues })) as DepthsResponse).depths);
    },
    // Its own invocation: the management API is reached from the function's network, and a slow one does not hold the depths.
    async nativeCounts(queues) {
      const { native } = (await invoke({ op: 'depths', queues: [], native: queues })) as DepthsResponse;
      if (native !== undefined) return new Map(native);
      const reason = `the operator function ${options.name} does not count them (it predates these counts): deploy it again`;
      return new Map(queues.map((name) => [name, { kind: 'unknown', reason } satisfies NativeCounts]));
    },
  };
}

export { remoteConsoleBroker };
