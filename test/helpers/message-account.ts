import { readFileSync } from 'node:fs';
import type { Channel, GetMessage } from 'amqplib';
import { messageKey } from './flaky-recorder.js';

/** What the record file says: every handled (S) and failed (F) attempt, in order. */
type Records = {
  /** One entry per successful attempt: [id, retryNo, copyId]. */
  readonly handled: readonly (readonly [string, number, string])[];
  readonly failedAttempts: number;
};

/** Where every sent message ended, and what went wrong. */
type Account = {
  readonly sent: number;
  /** Distinct messages with at least one handled attempt. */
  readonly handled: number;
  /** Distinct messages found in the parking lot. */
  readonly parked: number;
  /** Distinct messages still in the work or delay queues. */
  readonly stillQueued: number;
  /** Sent, but neither handled, parked nor queued. */
  readonly missing: readonly string[];
  /**
   * Extra outcomes: for each sent id, (successful handled attempts + parked copies + still-queued
   * copies) - 1, when above 0. An outcome per copy that existed, so it counts repeated effects (see
   * `repeatedEffects`) and also outcomes that repeat no effect: an id handled once and also parked,
   * parked twice, or handled and still queued, because a crash left two copies of it.
   */
  readonly duplicates: number;
  readonly duplicatedIds: readonly string[];
  /**
   * Repeated handler effects: for each sent id, (successful handled attempts, the record file's `S`
   * lines) - 1, when above 0. What a team's handler would have done twice; always <= `duplicates`.
   */
  readonly repeatedEffects: number;
  readonly repeatedEffectIds: readonly string[];
  /** Sent ids both handled and parked: one of `duplicates`' outcomes that repeat no effect, and the least expected. */
  readonly handledAndParkedIds: readonly string[];
  /**
   * Duplicates where the same delivered copy (same id and copy id) was handled twice: the process died
   * between a successful handler and its ack, so that very message came back. Either ACK_ORDER does
   * this; the rest of `duplicates` are second copies (publish-then-ack's crash window).
   */
  readonly handledTwiceSameCopy: number;
  /** Outcomes for ids that were never sent (should be none). */
  readonly strangers: readonly string[];
};

function readRecords(file: string): Records {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // No attempt was ever recorded.
  }
  return parseRecords(text);
}

/** The record file's lines (`S|F <id> <retryNo> <copyId> ...`); other kinds of line are left out. */
function parseRecords(text: string): Records {
  const handled: [string, number, string][] = [];
  let failedAttempts = 0;
  for (const line of text.split('\n')) {
    const [kind, id, retryNo, copyId] = line.split(' ');
    if (kind === 'S' && id !== undefined) handled.push([id, Number(retryNo), copyId ?? '-']);
    else if (kind === 'F') failedAttempts++;
  }
  return { handled, failedAttempts };
}

/** Removes every message from `queue` and returns them (basic.get, no ack needed). */
async function drainQueue(channel: Channel, queue: string): Promise<GetMessage[]> {
  const out: GetMessage[] = [];
  for (;;) {
    const message = await channel.get(queue, { noAck: true });
    if (message === false) return out;
    out.push(message);
  }
}

/** The key the records use for a message taken from a queue. */
function keyOf(message: GetMessage): string {
  return messageKey(message.properties.messageId as string | undefined, message.content);
}

/** Accounts for every sent id: handled, parked, still queued, missing, or duplicated. */
function accountFor(
  sentIds: readonly string[],
  outcomes: { readonly records: Records; readonly parkedIds: readonly string[]; readonly queuedIds: readonly string[] },
): Account {
  const count = new Map<string, number>();
  const successes = new Map<string, number>();
  const bump = (counts: Map<string, number>, id: string): void => {
    counts.set(id, (counts.get(id) ?? 0) + 1);
  };
  const sent = new Set(sentIds);
  const copies = new Set<string>();
  let handledTwiceSameCopy = 0;
  for (const [id, , copyId] of outcomes.records.handled) {
    bump(count, id);
    bump(successes, id);
    const copy = `${id}#${copyId}`;
    if (copies.has(copy)) handledTwiceSameCopy++;
    copies.add(copy);
  }
  for (const id of outcomes.parkedIds) bump(count, id);
  for (const id of outcomes.queuedIds) bump(count, id);
  const duplicatedIds = moreThanOnce(count, sent);
  const repeatedEffectIds = moreThanOnce(successes, sent);
  const parked = new Set(outcomes.parkedIds);
  return {
    sent: sent.size,
    handled: successes.size,
    parked: parked.size,
    stillQueued: new Set(outcomes.queuedIds).size,
    missing: [...sent].filter((id) => !count.has(id)),
    duplicates: extras(count, duplicatedIds),
    duplicatedIds,
    repeatedEffects: extras(successes, repeatedEffectIds),
    repeatedEffectIds,
    handledAndParkedIds: [...successes.keys()].filter((id) => sent.has(id) && parked.has(id)),
    handledTwiceSameCopy,
    strangers: [...count.keys()].filter((id) => !sent.has(id)),
  };
}

/** The sent ids counted more than once. */
function moreThanOnce(counts: ReadonlyMap<string, number>, sent: ReadonlySet<string>): string[] {
  return [...counts].filter(([id, n]) => sent.has(id) && n > 1).map(([id]) => id);
}

/** Of `ids`, the occurrences beyond the first. */
function extras(counts: ReadonlyMap<string, number>, ids: readonly string[]): number {
  return ids.reduce((sum, id) => sum + (counts.get(id) ?? 1) - 1, 0);
}

/** One line for the test log. */
function describeAccount(account: Account): string {
  return (
    `sent ${account.sent}: handled ${account.handled}, parked ${account.parked}, still queued ${account.stillQueued}, ` +
    `missing ${account.missing.length}, duplicates ${account.duplicates} ` +
    `(${account.handledTwiceSameCopy} of them the same copy handled twice), ` +
    `repeated effects ${account.repeatedEffects}${account.repeatedEffectIds.length > 0 ? ` (${sample(account.repeatedEffectIds)})` : ''}, ` +
    `handled and parked ${account.handledAndParkedIds.length}${account.handledAndParkedIds.length > 0 ? ` (${sample(account.handledAndParkedIds)})` : ''}`
  );
}

/** The first few ids, enough to find them in a record file. */
function sample(ids: readonly string[], most = 5): string {
  return ids.length <= most ? ids.join(', ') : `${ids.slice(0, most).join(', ')}, and ${ids.length - most} more`;
}

export { accountFor, describeAccount, drainQueue, keyOf, parseRecords, readRecords };
export type { Account };
