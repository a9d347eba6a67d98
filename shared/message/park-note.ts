/**
 * A park note: why a message was parked when the broker moved it and no Boomerang header could go
 * with it. A body over `MAX_MESSAGE_BYTES` cannot be copied, so pull mode rejects it and the work
 * queue's dead-lettering parks the original as it was; the failure that parked it would otherwise
 * be only in a log. The note is that message's parked copy without its body or the team's headers
 * (Boomerang's headers only: error name, message, fields, stack, history, attempts, reason), plus the
 * SHA-256 of the body it belongs to, published to the lot's notes queue before the reject. The
 * parking-lot tools find it by that digest (parked/park-notes.ts) and read the parked message with
 * its fields, as if Boomerang had copied it.
 */
import { createHash } from 'node:crypto';
import { buildParkedCopy, type Copy, type Delivery, type ParkInput } from './copy-message.js';
import { BoomerangHeader } from './headers.js';

/** The AMQP `type` of a note, so that a note read by hand says what it is. */
const PARK_NOTE_TYPE = 'boomerang.park-note';

/** The notes queue beside a parking lot: `<parking lot>.notes`. */
function parkNotesQueue(parkingQueue: string): string {
  return `${parkingQueue}.notes`;
}

/** The digest a note names its message by: a message id can repeat or be missing, a body cannot lie. */
function bodySha256(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

/**
 * The note of a message parked without a copy: empty body, Boomerang's park headers, the body's
 * digest, and the message's id and correlation id (to find it by hand).
 */
function buildParkNote(delivery: Delivery, input: Omit<ParkInput, 'withoutUserHeaders'>): Copy {
  const parked = buildParkedCopy({ ...delivery, content: Buffer.alloc(0) }, { ...input, withoutUserHeaders: true });
  const headers = { ...parked.options.headers, [BoomerangHeader.noteOfBodySha256]: bodySha256(delivery.content) };
  const { messageId, correlationId } = delivery.properties;
  return {
    content: Buffer.alloc(0),
    options: {
      persistent: true,
      type: PARK_NOTE_TYPE,
      headers,
      ...(messageId === undefined ? {} : { messageId }),
      ...(correlationId === undefined ? {} : { correlationId }),
    },
  };
}

export { bodySha256, buildParkNote, parkNotesQueue };
