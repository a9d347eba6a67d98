import { EventShapeError } from '../errors.js';
import { decodeMessage, type DecodedMessage } from './decode-message.js';
import { isTable } from './decode-headers.js';
import { parseQueueKey } from './rmq-event.js';

/** The function's own queues: where an event's queues map to. */
type EventRouting = {
  /** `WORK_QUEUE`: its parking lot is `parkingQueue`. */
  readonly workQueue: string;
  /** `PARKING_QUEUE` (default `<WORK_QUEUE>.parked`). */
  readonly parkingQueue: string;
};

/** One message of the event, with the queue it came from and where it goes when parked. */
type EventRecord = DecodedMessage & {
  /** W, from the event key: its delay path takes the retries. */
  readonly queue: string;
  /** The vhost from the event key; undefined when the key carries none. */
  readonly vhost: string | undefined;
  readonly parkingQueue: string;
};

/**
 * Every message of an `aws:rmq` event, decoded, in event order. Queue W comes from the event key
 * `"W::vhost"`; W's parking lot is `PARKING_QUEUE` when W is `WORK_QUEUE`, else `W.parked`. A key
 * that names no queue, or whose value is not a list, is not dropped: its content is parked in
 * `PARKING_QUEUE` with the reason.
 * @example
 * decodeEvent(event, { workQueue: 'orders', parkingQueue: 'orders.parking' })
 * // [{ queue: 'orders', vhost: '/', parkingQueue: 'orders.parking', delivery, problem: undefined, notes: [] }, ...]
 */
function decodeEvent(event: unknown, routing: EventRouting): EventRecord[] {
  const byQueue = isTable(event) ? event.rmqMessagesByQueue : undefined;
  if (!isTable(byQueue)) {
    throw new EventShapeError('Not an aws:rmq event: rmqMessagesByQueue is missing or not an object. Is the function wired to an Amazon MQ event source mapping?');
  }
  const records: EventRecord[] = [];
  for (const [key, messages] of Object.entries(byQueue)) {
    const { queue, vhost } = parseQueueKey(key);
    const keyProblem = queue === undefined ? `the event key ${JSON.stringify(key)} names no queue` : !Array.isArray(messages) ? `the messages of event key ${JSON.stringify(key)} are not a list` : undefined;
    const target = keyProblem === undefined && queue !== undefined
      ? { queue, vhost, parkingQueue: queue === routing.workQueue ? routing.parkingQueue : `${queue}.parked` }
      : { queue: routing.workQueue, vhost, parkingQueue: routing.parkingQueue };
    for (const raw of Array.isArray(messages) ? messages : [messages]) {
      const decoded = decodeMessage(raw, target.queue);
      records.push({ ...decoded, ...target, problem: keyProblem ?? decoded.problem });
    }
  }
  return records;
}

export { decodeEvent };
export type { EventRecord, EventRouting };
