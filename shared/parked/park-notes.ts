/**
 * Reads the park notes of a lot (message/park-note.ts): a message the broker parked because no copy
 * could carry it is shown with the failure its note records. The notes queue is read once per
 * command, at the first message that may have a note, and left as it was (its deliveries are given
 * back when the channel closes). A lot walk holds the lot's reader lock, so no other tool reads the
 * notes at the same time.
 */
import type { ChannelModel, Message } from 'amqplib';
import { BoomerangHeader } from '../message/headers.js';
import { bodySha256, parkNotesQueue } from '../message/park-note.js';
import { mayHaveParkNote, type Parked, type ParkedView, toParkedView } from './parked-view.js';

/** Finds the park note of a parked message. */
type ParkNotes = { readonly noteOf: (message: Parked) => Promise<Parked | undefined> };

/** How long the read waits for the next note before it takes what came (notes dropped meanwhile by the length limit). */
const NOTES_IDLE_MS = 2000;

/**
 * The park notes beside `parkingQueue` on `connection`, read at the first `noteOf` that needs them.
 * A message's note is the newest one with its body's digest and its source queue; none when the
 * notes queue is missing or cannot be read (the message shows as the broker parked it).
 */
function createParkNotes(connection: ChannelModel, parkingQueue: string): ParkNotes {
  let notes: Promise<Map<string, Message[]>> | undefined;
  return {
    noteOf: async (message) => {
      notes ??= readNotes(connection, parkNotesQueue(parkingQueue)).catch(() => new Map<string, Message[]>());
      const candidates = (await notes).get(bodySha256(message.content)) ?? [];
      const from = toParkedView(message).brokerSourceQueue;
      let newest: { note: Message; at: string } | undefined;
      for (const note of candidates) {
        const view = toParkedView(note);
        if (from !== undefined && view.sourceQueue !== from) continue;
        const at = view.parkedAt?.toISOString() ?? '';
        if (newest === undefined || at >= newest.at) newest = { note, at };
      }
      return newest?.note;
    },
  };
}

/**
 * The view of a parked message, with its park note when it may have one (`mayHaveParkNote`);
 * without `notes` (a test's context), the message alone.
 */
function parkedViewOf(notes: ParkNotes | undefined, message: Parked): ParkedView | Promise<ParkedView> {
  if (notes === undefined || !mayHaveParkNote(message)) return toParkedView(message);
  return notes.noteOf(message).then((note) => toParkedView(message, note));
}

/** Every note of `queue`, by the digest of the body it stands beside. */
async function readNotes(connection: ChannelModel, queue: string): Promise<Map<string, Message[]>> {
  const channel = await connection.createChannel();
  // A missing notes queue closes this channel with 404: no notes.
  channel.on('error', () => undefined);
  const byDigest = new Map<string, Message[]>();
  try {
    const { messageCount } = await channel.checkQueue(queue);
    if (messageCount === 0) return byDigest;
    let received = 0;
    let idle: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve, reject) => {
      idle = setTimeout(resolve, NOTES_IDLE_MS);
      channel
        .consume(queue, (note) => {
          if (note === null) return resolve();
          received++;
          const digest = note.properties.headers?.[BoomerangHeader.noteOfBodySha256];
          if (typeof digest === 'string') byDigest.set(digest, [...(byDigest.get(digest) ?? []), note]);
          clearTimeout(idle);
          if (received >= messageCount) resolve();
          else idle = setTimeout(resolve, NOTES_IDLE_MS);
        })
        .catch(reject);
    }).finally(() => clearTimeout(idle));
    return byDigest;
  } finally {
    // Closing gives back every note it holds, unacked: the queue keeps them all.
    await channel.close().catch(() => undefined);
  }
}

export { createParkNotes, parkedViewOf };
export type { ParkNotes };
