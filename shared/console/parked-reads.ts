import { createHash } from 'node:crypto';
import type { Message } from 'amqplib';
import { Selection, walkReported, type CommandContext, type WalkResult } from '../parked/context.js';
import type { ParkedFilter } from '../parked/filters.js';
import { showEntry, valueText } from '../parked/message-format.js';
import { NATIVE_RETRY_NO, parkField, type BoomerangField } from '../parked/park-fields.js';
import { failureEntries } from '../message/failure-history.js';
import { parkedViewOf } from '../parked/park-notes.js';
import { listEntry } from '../parked/table.js';
import { editStart } from './message-edit.js';

const KEEP = { kind: 'keep' } as const;

const sha256 = (body: Buffer): string => createHash('sha256').update(body).digest('hex');

/**
 * Which parked message to read: by its id (the first with it), or, for one without an id, by its
 * `position` in the lot (0 = the head) as a list read it, checked against the SHA-256 of its body.
 * A read gives every message back in order, so the position holds until the lot changes; the hash
 * makes a changed lot answer "not found" rather than show another message.
 */
type MessagePick = { readonly messageId: string } | { readonly position: number; readonly bodySha256: string };

/**
 * The parked messages that match, as `list --json` rows plus each one's `position` and `bodySha256`
 * (what a {@link MessagePick} without an id takes), at most `limit` of them held (the walk still
 * reads, and so keeps in order, the whole parking lot); `matched` counts them all.
 */
async function readMessageList(
  ctx: CommandContext,
  filter: ParkedFilter,
  limit: number,
): Promise<WalkResult & { readonly messages: Record<string, unknown>[]; readonly matched: number }> {
  const nowMs = (ctx.now ?? Date.now)();
  const matching = new Selection(filter, Number.POSITIVE_INFINITY, nowMs);
  const messages: Record<string, unknown>[] = [];
  let position = 0;
  const result = await walkReported(
    ctx,
    ctx.progress('list', () => `${matching.selected} matched`),
    {
      readOnly: true,
      visit: async (message) => {
        const view = await parkedViewOf(ctx.parkNotes, message);
        if (matching.take(view) && messages.length < limit) messages.push({ ...listEntry(view, nowMs), position, bodySha256: sha256(message.content) });
        position++;
        return KEEP;
      },
    },
  );
  return { ...result, messages, matched: matching.selected };
}

/** One step of a message's history, oldest first. */
type HistoryStep = { readonly at: string | null; readonly event: string };

/**
 * What happened to a message, read from its headers: first and last failure, retries and attempts,
 * the park, and each dead-lettering the broker recorded (`x-death`). A native park's fields are its
 * `x-opt-boomerang-*` annotations, and its retries were the broker's, not trips through a delay queue.
 */
function attemptHistory(headers: Readonly<Record<string, unknown>>, retryHeader: string): HistoryStep[] {
  const field = (name: BoomerangField): unknown => parkField(headers, name);
  const at = (name: BoomerangField): string | null => (field(name) === undefined ? null : valueText(field(name)));
  const steps: HistoryStep[] = [];
  const retries = headers[retryHeader];
  const nativeRetries = headers[NATIVE_RETRY_NO];
  const retried =
    retries !== undefined
      ? `retried ${valueText(retries)} time(s) through the delay path`
      : nativeRetries !== undefined
        ? `retried ${valueText(nativeRetries)} time(s) by the broker (native delayed retry)`
        : undefined;
  // Each failed attempt, as the message carries them (the last 10); else what older copies carry: the first and last.
  const failures = failureEntries(field('failureHistory'));
  if (failures.length > 0) {
    for (const failure of failures) steps.push({ at: failure.at === '' ? null : failure.at, event: `failed: ${failure.name}: ${failure.message}` });
    if (retried !== undefined) steps.push({ at: null, event: retried });
  } else {
    if (field('firstFailureAt') !== undefined) steps.push({ at: at('firstFailureAt'), event: 'first failure' });
    if (retried !== undefined) steps.push({ at: null, event: retried });
    if (field('lastFailureAt') !== undefined) steps.push({ at: at('lastFailureAt'), event: 'last failure' });
  }
  const deaths = Array.isArray(headers['x-death']) ? (headers['x-death'] as Record<string, unknown>[]) : [];
  for (const death of [...deaths].reverse()) {
    const time = death.time as { value?: unknown } | undefined;
    const when = typeof time?.value === 'number' ? new Date(time.value * 1000).toISOString() : null;
    steps.push({
      at: when,
      event: `dead-lettered by the broker from ${valueText(death.queue)} (${valueText(death.reason)}), ${valueText(death.count)} time(s)`,
    });
  }
  if (field('parkedAt') !== undefined) {
    const attempts = field('attempts');
    steps.push({
      at: at('parkedAt'),
      event: `parked after ${attempts === undefined ? 'an unknown number of' : valueText(attempts)} attempt(s): ${valueText(field('parkReason') ?? 'no reason recorded')}`,
    });
  }
  return steps;
}

/** Characters of the body preview the console shows; the edit form starts from the whole text instead (`edit`). */
const DETAIL_BODY_CHARS = 256 * 1024;

/**
 * The picked parked message, in full for the message view: `show --json`'s object plus the error
 * stack, the attempt history and what an edit starts from (the body's exact text or why it cannot
 * be edited, and the headers a replay sends); null when no parked message is the one picked.
 */
async function readMessageDetail(
  ctx: CommandContext,
  pick: MessagePick,
  retryHeader: string,
): Promise<WalkResult & { readonly message: Record<string, unknown> | null }> {
  let found: Message | undefined;
  let position = 0;
  const picked = (message: Message, at: number): boolean =>
    'messageId' in pick ? message.properties.messageId === pick.messageId : at === pick.position && sha256(message.content) === pick.bodySha256;
  const result = await walkReported(
    ctx,
    ctx.progress('show', () => (found ? 'found' : 'looking')),
    {
      readOnly: true,
      visit: (message) => {
        if (found === undefined && picked(message, position)) found = message;
        position++;
        return KEEP;
      },
    },
  );
  if (found === undefined) return { ...result, message: null };
  const view = await parkedViewOf(ctx.parkNotes, found);
  // A message the broker parked reads its failure from its park note; the broker's own record stays its.
  const headers = { ...view.parkNote, ...found.properties.headers };
  const stack = parkField(headers, 'errorStack');
  return {
    ...result,
    message: {
      ...showEntry(found, DETAIL_BODY_CHARS, view),
      stack: stack === undefined ? null : valueText(stack),
      history: attemptHistory(headers, retryHeader),
      edit: editStart(found, retryHeader),
    },
  };
}

export { attemptHistory, readMessageDetail, readMessageList };
export type { MessagePick };
