import type { Message } from 'amqplib';
import { walkReported, type CommandContext, type WalkResult } from './context.js';
import { formatShow, showEntry } from './message-format.js';
import { parkedViewOf } from './park-notes.js';

/** Options of {@link showParked}. */
type ShowOptions = {
  readonly messageId: string;
  readonly json: boolean;
  /** Characters of the body preview. @default 4000 */
  readonly maxBodyChars?: number;
  /**
   * The broker's read counts to show, per copy found, instead of this read's (each read raises them):
   * the operator function shows a message in parts, each part a read, and every part shows the first's.
   * @default this read's
   */
  readonly readCounts?: readonly ReadCounts[];
};

/** The headers a quorum queue sets on each delivery, counting reads (`x-delivery-count`; on 4.3 `x-acquired-count`). */
type ReadCounts = Readonly<Record<string, unknown>>;

const READ_COUNT_HEADERS = ['x-delivery-count', 'x-acquired-count'] as const;

function readCountsOf(message: Message): ReadCounts {
  const headers = message.properties.headers ?? {};
  return Object.fromEntries(READ_COUNT_HEADERS.filter((name) => name in headers).map((name) => [name, headers[name] as unknown]));
}

/** The message with `counts` in place of its own read counts, each header where it was. */
function withReadCounts(message: Message, counts: ReadCounts | undefined): Message {
  if (counts === undefined) return message;
  const own = message.properties.headers ?? {};
  const headers = Object.fromEntries(
    Object.entries(own)
      .filter(([name]) => !isReadCount(name) || name in counts)
      .map(([name, value]) => [name, isReadCount(name) ? counts[name] : value]),
  );
  for (const [name, value] of Object.entries(counts)) if (!(name in headers)) headers[name] = value;
  return { ...message, properties: { ...message.properties, headers } };
}

function isReadCount(name: string): boolean {
  return (READ_COUNT_HEADERS as readonly string[]).includes(name);
}

/** More copies of one id than this are counted, not shown (each one shown is held in memory). */
const MAX_SHOWN = 10;

/**
 * `show <messageId>`: headers, properties and a body preview of the parked message(s) with this id,
 * found by one full read of the parking lot (which leaves it as it was).
 */
async function showParked(
  ctx: CommandContext,
  options: ShowOptions,
): Promise<WalkResult & { readonly found: number; readonly readCounts: readonly ReadCounts[] }> {
  const found: Message[] = [];
  let count = 0;
  const progress = ctx.progress('show', () => `${count} found`);
  const result = await walkReported(ctx, progress, {
    readOnly: true,
    visit: (message) => {
      if (message.properties.messageId === options.messageId && ++count <= MAX_SHOWN) found.push(message);
      return { kind: 'keep' };
    },
  });
  const maxBodyChars = options.maxBodyChars ?? 4000;
  const readCounts = found.map(readCountsOf);
  for (const [i, shown] of found.map((message, i) => withReadCounts(message, options.readCounts?.[i])).entries()) {
    const view = await parkedViewOf(ctx.parkNotes, shown);
    if (options.json) progress.print(JSON.stringify(showEntry(shown, maxBodyChars, view)));
    else
      progress.print(`${i > 0 ? '\n' : ''}Message ${options.messageId} (${i + 1} of ${count} parked with this id)\n${formatShow(shown, maxBodyChars, view)}`);
  }
  if (count > MAX_SHOWN && !options.json) progress.print(`\n… ${count - MAX_SHOWN} more with this id not shown`);
  return { ...result, found: count, readCounts };
}

export { showParked };
export type { ReadCounts, ShowOptions };
