import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Message } from 'amqplib';
import type { Copy } from '../message/copy-message.js';
import { walkReported, type CommandContext, type WalkResult } from '../parked/context.js';
import { replayCopy } from '../parked/copies.js';
import { replayDestination } from '../parked/replay.js';
import { toParkedView, type Parked } from '../parked/parked-view.js';
import { bodyEditability, EDITED_HEADER, type MessageEdit } from './message-edit.js';

/**
 * The message an edit sends: `edited` with the audit header; `unchanged` when the edit changes
 * nothing a replay sends (then it is a plain replay, without the audit header: nothing was edited);
 * `refused` when it replaces a body the page could not have shown as text.
 */
type EditedCopy = { readonly kind: 'edited' | 'unchanged'; readonly copy: Copy } | { readonly kind: 'refused'; readonly reason: string };

/**
 * The edit applied onto the parked message, then treated as a replay (park and broker headers
 * removed, retry count reset): every header kept unless removed, the body kept byte for byte unless
 * replaced. An edited copy carries the audit header: when, and a hash of the original body.
 */
function editedCopy(message: Parked, edit: MessageEdit, options: { readonly retryHeader: string; readonly nowMs: number }): EditedCopy {
  if (edit.body !== undefined) {
    const editability = bodyEditability(message);
    if (!editability.editable) return { kind: 'refused', reason: `the parked body cannot be replaced from the console: ${editability.reason}` };
  }
  const headers: Record<string, unknown> = { ...message.properties.headers };
  for (const name of edit.remove) delete headers[name];
  Object.assign(headers, edit.set);
  const content = edit.body === undefined ? message.content : Buffer.from(edit.body, 'utf8');
  const replay = { retryHeader: options.retryHeader, keepCount: false };
  const plain = replayCopy(message, replay);
  const copy = replayCopy({ ...message, content, properties: { ...message.properties, headers } }, replay);
  if (content.equals(message.content) && isDeepStrictEqual(copy.options.headers, plain.options.headers)) return { kind: 'unchanged', copy: plain };
  const hash = createHash('sha256').update(message.content).digest('hex');
  const audit = `edited-at=${new Date(options.nowMs).toISOString()}; original-body-sha256=${hash}`;
  return { kind: 'edited', copy: { content: copy.content, options: { ...copy.options, headers: { ...copy.options.headers, [EDITED_HEADER]: audit } } } };
}

/** What {@link editAndReplay} did. */
type EditReplayResult = WalkResult & {
  /** The queue the message went to; null when it was not found, had no source queue, was refused, or its queue does not exist. */
  readonly replayedTo: string | null;
  /** Why it stayed parked: its boomerang-source-queue header names a queue neither the work queue nor the broker does, or the edit replaces a body that is not text. */
  readonly refused?: string;
  readonly found: boolean;
  /** False when the edit changed nothing: the message was replayed as it is, without the audit header. */
  readonly edited: boolean;
};

/**
 * Replaces the first parked message with this id by its edited copy on its source queue (published
 * with a confirm before the parked original is acked), in one walk that keeps everything else in order.
 */
async function editAndReplay(
  ctx: CommandContext,
  options: { readonly messageId: string; readonly edit: MessageEdit; readonly retryHeader: string; readonly workQueue: string },
): Promise<EditReplayResult> {
  let target: string | undefined;
  let refused: string | undefined;
  let found = false;
  let edited = false;
  let unroutable = false;
  const progress = ctx.progress('edit and replay', () => (found ? 'found' : 'looking'));
  const result = await walkReported(ctx, progress, {
    onNotMoved: () => {
      unroutable = true;
    },
    visit: (message: Message) => {
      if (found || message.properties.messageId !== options.messageId) return { kind: 'keep' };
      found = true;
      const destination = replayDestination(toParkedView(message), { workQueue: options.workQueue });
      if (destination.kind === 'refused') refused = destination.refusal.reason;
      if (destination.kind !== 'queue') return { kind: 'keep' };
      const outcome = editedCopy(message, options.edit, { retryHeader: options.retryHeader, nowMs: (ctx.now ?? Date.now)() });
      if (outcome.kind === 'refused') {
        refused = outcome.reason;
        return { kind: 'keep' };
      }
      target = destination.queue;
      edited = outcome.kind === 'edited';
      return { kind: 'move', queue: target, copy: outcome.copy };
    },
  });
  return { ...result, found, edited, replayedTo: unroutable ? null : (target ?? null), ...(refused === undefined ? {} : { refused }) };
}

export { editAndReplay, editedCopy };
export type { EditReplayResult };
