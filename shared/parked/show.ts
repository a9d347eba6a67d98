import type { Message } from 'amqplib';
import { walkReported, type CommandContext, type WalkResult } from './context.js';
import { formatShow, showEntry } from './message-format.js';

/** Options of {@link showParked}. */
type ShowOptions = {
  readonly messageId: string;
  readonly json: boolean;
  /** Characters of the body preview. @default 4000 */
  readonly maxBodyChars?: number;
};

/** More copies of one id than this are counted, not shown (each one shown is held in memory). */
const MAX_SHOWN = 10;

/**
 * `show <messageId>`: headers, properties and a body preview of the parked message(s) with this id,
 * found by one full read of the parking lot (which leaves it as it was).
 */
async function showParked(ctx: CommandContext, options: ShowOptions): Promise<WalkResult & { readonly found: number }> {
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
  found.forEach((message, i) => {
    if (options.json) progress.print(JSON.stringify(showEntry(message, maxBodyChars)));
    else progress.print(`${i > 0 ? '\n' : ''}Message ${options.messageId} (${i + 1} of ${count} parked with this id)\n${formatShow(message, maxBodyChars)}`);
  });
  if (count > MAX_SHOWN && !options.json) progress.print(`\n… ${count - MAX_SHOWN} more with this id not shown`);
  return { ...result, found: count };
}

export { showParked };
export type { ShowOptions };
