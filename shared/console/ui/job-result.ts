/**
 * A finished action's result in words, one line per fact: what the operator reads on the page
 * instead of the API's JSON (which stays the API's answer).
 */

type Json = Record<string, unknown>;

/** How a walk ended, when it did not read the whole parking lot. */
const ENDINGS: Readonly<Record<string, string>> = {
  aborted: 'Stopped before the end of the parking lot.',
  'queue-shrank': 'The parking lot held fewer messages than counted (someone else took some): the others were not read.',
};

const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
const entries = (value: unknown): [string, number][] => Object.entries((value ?? {}) as Record<string, number>);
const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);
const idOf = (item: Json): string => (typeof item.messageId === 'string' ? `message ${item.messageId}` : 'a message without id');

function replayLines(r: Json): string[] {
  const sent = entries(r.byQueue);
  const lines = sent.length === 0 ? ['Replayed nothing.'] : sent.map(([queue, n]) => `Replayed ${count(n, 'message')} to ${queue}.`);
  for (const [queue, n] of entries(r.unroutable)) lines.push(`Left ${count(n, 'message')} parked: there is no queue ${queue}.`);
  if (typeof r.noSource === 'number' && r.noSource > 0) lines.push(`Left ${count(r.noSource, 'message')} parked: no source queue recorded.`);
  for (const item of list(r.refused)) lines.push(`Left ${idOf(item)} parked: ${String(item.reason)}.`);
  for (const item of list(r.unsendable)) lines.push(`Left ${idOf(item)} parked: it cannot be sent (${String(item.reason)}).`);
  return lines;
}

function purgeLines(r: Json): string[] {
  const deleted = Number(r.deleted ?? 0);
  const selected = Number(r.selected ?? deleted);
  return [
    deleted === 0 ? 'Deleted nothing.' : `Deleted ${count(deleted, 'parked message')}.`,
    ...(selected > deleted ? [`${selected - deleted} matching stayed parked.`] : []),
  ];
}

function editReplayLines(r: Json): string[] {
  if (r.found === false) return ['The message is no longer in the parking lot: nothing was replayed.'];
  if (typeof r.replayedTo === 'string')
    return [`${r.edited === true ? 'Replayed the edited message' : 'Nothing was changed: replayed the message as it was'} to ${r.replayedTo}.`];
  return [`Left the message parked: ${typeof r.refused === 'string' ? r.refused : 'its queue does not exist or it names no source queue'}.`];
}

/**
 * The lines that say what an action (`replay`, `purge`, `edit-replay`) did, from its job result.
 * @example jobResultText('replay', { byQueue: { orders: 4 }, unroutable: {}, noSource: 0, refused: [], unsendable: [], ending: 'done' }) // ['Replayed 4 messages to orders.']
 */
function jobResultText(kind: string, result: Json): string[] {
  const lines =
    kind === 'replay'
      ? replayLines(result)
      : kind === 'purge'
        ? purgeLines(result)
        : kind === 'edit-replay'
          ? editReplayLines(result)
          : [JSON.stringify(result)];
  const ending = ENDINGS[String(result.ending)];
  return ending === undefined ? lines : [...lines, ending];
}

export { jobResultText };
