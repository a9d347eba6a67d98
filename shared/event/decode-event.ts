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
 * `PARKING_QUEUE` with the reason. An input that is no `aws:rmq` event (see `eventShapeProblem`)
 * throws `EventShapeError` before anything is decoded, so the invocation fails with no message settled.
 * @example
 * decodeEvent(event, { workQueue: 'orders', parkingQueue: 'orders.parking' })
 * // [{ queue: 'orders', vhost: '/', parkingQueue: 'orders.parking', delivery, problem: undefined, notes: [] }, ...]
 */
function decodeEvent(event: unknown, routing: EventRouting): EventRecord[] {
  const problem = eventShapeProblem(event);
  if (problem !== undefined) {
    throw new EventShapeError(`Not an aws:rmq event: ${problem}. Is the function wired to an Amazon MQ for RabbitMQ event source mapping?`);
  }
  const records: EventRecord[] = [];
  for (const [key, messages] of Object.entries((event as { rmqMessagesByQueue: Record<string, unknown> }).rmqMessagesByQueue)) {
    const { queue, vhost } = parseQueueKey(key);
    const keyProblem =
      queue === undefined
        ? `the event key ${JSON.stringify(key)} names no queue`
        : !Array.isArray(messages)
          ? `the messages of event key ${JSON.stringify(key)} are not a list`
          : undefined;
    const target =
      keyProblem === undefined && queue !== undefined
        ? { queue, vhost, parkingQueue: queue === routing.workQueue ? routing.parkingQueue : `${queue}.parked` }
        : { queue: routing.workQueue, vhost, parkingQueue: routing.parkingQueue };
    for (const raw of Array.isArray(messages) ? messages : [messages]) {
      const decoded = decodeMessage(raw, target.queue);
      records.push({ ...decoded, ...target, problem: keyProblem ?? decoded.problem });
    }
  }
  return records;
}

/**
 * Why `event` is no `aws:rmq` event, or undefined when it is one (pure). The event source mapping
 * always sets `eventSource` and keys every queue `"<queue>::<vhost>"`: another source's event (SQS,
 * a test's hand-made one) would otherwise be read as a batch, and a key without its vhost could not
 * be checked against the connection's vhost, so a copy could go to another vhost's queue.
 * @example eventShapeProblem({ eventSource: 'aws:sqs', Records: [] }) // 'eventSource is "aws:sqs", not "aws:rmq"'
 */
function eventShapeProblem(event: unknown): string | undefined {
  if (!isTable(event)) return `the event is ${event === null ? 'null' : Array.isArray(event) ? 'a list' : `a ${typeof event}`}, not an object`;
  if (event.eventSource !== 'aws:rmq')
    return event.eventSource === undefined ? 'it has no eventSource' : `eventSource is ${JSON.stringify(event.eventSource)}, not "aws:rmq"`;
  if (!isTable(event.rmqMessagesByQueue)) return 'rmqMessagesByQueue is missing or not an object';
  const noVhost = Object.keys(event.rmqMessagesByQueue).find((key) => (parseQueueKey(key).vhost ?? '') === '');
  if (noVhost !== undefined) return `the event key ${JSON.stringify(noVhost)} names no vhost (the event source writes "<queue>::<vhost>")`;
  return undefined;
}

export { decodeEvent, eventShapeProblem };
export type { EventRecord };
