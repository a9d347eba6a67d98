import { createHash } from 'node:crypto';
import type { Message } from 'amqplib';
import type { Copy } from '../message/copy-message.js';
import { walkReported, type CommandContext, type WalkResult } from '../parked/context.js';
import { replayCopy } from '../parked/copies.js';
import { replayDestination } from '../parked/replay.js';
import { toParkedView, type Parked } from '../parked/parked-view.js';
import { ConsoleInputError } from './errors.js';

/** The audit header an edited message carries: `edited-at=<ISO time>; original-body-sha256=<hex>`. */
const EDITED_HEADER = 'boomerang-edited';

/** Edited bodies above this are refused: the console is for fixing a message, not for uploads. */
const MAX_EDITED_BODY_BYTES = 1024 * 1024;

/** What an operator changed: the whole body and the whole header table (park headers are dropped on replay anyway). */
type MessageEdit = {
  readonly body: string;
  readonly headers: Readonly<Record<string, string | number | boolean>>;
};

/**
 * Checks an edit as the browser sent it; throws a `ConsoleInputError` that names the bad part.
 * @example parseMessageEdit({ body: '{"orderId":1}', headers: { tenant: 'acme' } })
 */
function parseMessageEdit(input: unknown): MessageEdit {
  const raw = (typeof input === 'object' && input !== null ? input : {}) as { body?: unknown; headers?: unknown };
  if (typeof raw.body !== 'string') throw new ConsoleInputError('the edit needs `body`, the new body as text');
  if (Buffer.byteLength(raw.body) > MAX_EDITED_BODY_BYTES) throw new ConsoleInputError(`the edited body is ${Buffer.byteLength(raw.body)} bytes; at most ${MAX_EDITED_BODY_BYTES} are accepted`);
  if (typeof raw.headers !== 'object' || raw.headers === null || Array.isArray(raw.headers)) throw new ConsoleInputError('the edit needs `headers`, an object of header names to text, number or true/false');
  for (const [name, value] of Object.entries(raw.headers)) {
    if (!['string', 'number', 'boolean'].includes(typeof value)) throw new ConsoleInputError(`header ${JSON.stringify(name)} must be text, a number or true/false; got ${JSON.stringify(value)}`);
    if (name === '' || Buffer.byteLength(name) > 255) throw new ConsoleInputError(`header name ${JSON.stringify(name)} must be 1 to 255 bytes`);
  }
  return { body: raw.body, headers: raw.headers as MessageEdit['headers'] };
}

/**
 * The edited message ready for its work queue: the new body and headers, treated as a replay
 * (park and broker headers removed, retry count reset), plus the audit header recording when it
 * was edited and a hash of the original body.
 */
function editedCopy(message: Parked, edit: MessageEdit, options: { readonly retryHeader: string; readonly nowMs: number }): Copy {
  const edited: Parked = { ...message, content: Buffer.from(edit.body, 'utf8'), properties: { ...message.properties, headers: { ...edit.headers } } };
  const copy = replayCopy(edited, { retryHeader: options.retryHeader, keepCount: false });
  const hash = createHash('sha256').update(message.content).digest('hex');
  const audit = `edited-at=${new Date(options.nowMs).toISOString()}; original-body-sha256=${hash}`;
  return { content: copy.content, options: { ...copy.options, headers: { ...copy.options.headers, [EDITED_HEADER]: audit } } };
}

/** What {@link editAndReplay} did. */
type EditReplayResult = WalkResult & {
  /** The queue the edited message went to; null when it was not found, had no source queue, was refused, or its queue does not exist. */
  readonly replayedTo: string | null;
  /** Why it stayed parked when its boomerang-source-queue header names a queue neither the work queue nor the broker does. */
  readonly refused?: string;
  readonly found: boolean;
};

/**
 * Replaces the first parked message with this id by its edited copy on its source queue (published
 * with a confirm before the parked original is acked), in one walk that keeps everything else in order.
 */
async function editAndReplay(ctx: CommandContext, options: { readonly messageId: string; readonly edit: MessageEdit; readonly retryHeader: string; readonly workQueue: string }): Promise<EditReplayResult> {
  let target: string | undefined;
  let refused: string | undefined;
  let found = false;
  let unroutable = false;
  const progress = ctx.progress('edit and replay', () => (found ? 'found' : 'looking'));
  const result = await walkReported(ctx, progress, {
    onNotMoved: () => { unroutable = true; },
    visit: (message: Message) => {
      if (found || message.properties.messageId !== options.messageId) return { kind: 'keep' };
      found = true;
      const destination = replayDestination(toParkedView(message), { workQueue: options.workQueue });
      if (destination.kind === 'refused') refused = destination.refusal.reason;
      if (destination.kind !== 'queue') return { kind: 'keep' };
      target = destination.queue;
      return { kind: 'move', queue: target, copy: editedCopy(message, options.edit, { retryHeader: options.retryHeader, nowMs: (ctx.now ?? Date.now)() }) };
    },
  });
  return { ...result, found, replayedTo: unroutable ? null : target ?? null, ...(refused === undefined ? {} : { refused }) };
}

export { EDITED_HEADER, editAndReplay, editedCopy, parseMessageEdit };
export type { EditReplayResult, MessageEdit };
