/**
 * The pause marker of a native queue (amqp/pause-marker.ts) over AMQP 1.0, so that a native function
 * needs no 0-9-1 connection for it. The management API (amqp10-management.ts) answers whether the
 * marker queue holds a message; only then is the message read, by a receiver of credit 1 on a session
 * of its own, and released (back to the queue untouched). A write declares the queue through the
 * management API and sends the marker on a session of its own, waiting for the broker's `accepted`.
 *
 * The marker's links get sessions of their own: an attach to a missing queue makes RabbitMQ 4.3 end
 * the session it was asked on (measured on 4.3.6), which must not be the work queue's.
 */
import type { Connection, EventContext, Message, Session } from 'rhea';
import { type PauseMarker, type PauseStart, pauseMarkerArguments, pauseMarkerMessage, pauseMarkerQueue, pausedUntilOf } from '../amqp/pause-marker.js';
import { BrokerConnectionError } from '../errors.js';
import type { Amqp10Management } from './amqp10-management.js';
import { fromAmqp10 } from './native-delivery.js';

/** How long a read waits for the marker's message, and a write for its `accepted`. */
const MARKER_WAIT_MS = 1_000;

/**
 * @param management the invocation's management API (undefined: it did not attach, and neither read nor write can be done)
 * @example
 * const marker = amqp10PauseMarker(broker.connection, management.api, config.workQueue);
 * const untilMs = await marker.read(); // undefined: not paused
 */
function amqp10PauseMarker(connection: Connection, management: () => Promise<Amqp10Management | undefined>, workQueue: string): PauseMarker {
  const queue = pauseMarkerQueue(workQueue);
  const address = `/queues/${encodeURIComponent(queue)}`;
  const api = async (): Promise<Amqp10Management> => {
    const attached = await management();
    if (attached === undefined)
      throw new BrokerConnectionError("The broker's management API (AMQP 1.0, /management) did not attach", { reason: 'channel-closed' });
    return attached;
  };
  return {
    queue,
    async read() {
      const info = await (await api()).declareQueue(queue, pauseMarkerArguments());
      // A marker another invocation is reading right now is not counted; its reader is.
      if (info.messageCount === 0 && info.consumerCount === 0) return undefined;
      // Drained when nobody else reads: no message then means it expired; else it comes once given back.
      const message = await onSession<Message>(connection, (session, done) => readOne(session, address, info.consumerCount === 0, done));
      return message === undefined ? undefined : pausedUntilOf(fromAmqp10(message).delivery.content, Date.now());
    },
    async write(pause: PauseStart, by: string) {
      const message = pauseMarkerMessage(pause, by, Date.now());
      if (message === undefined) return;
      await (await api()).declareQueue(queue, pauseMarkerArguments());
      // Loaded already (the connection is open); a data section keeps the body bytes for any reader, 0-9-1 included.
      const { default: rhea } = await import('rhea');
      const body = rhea.message.data_section(message.content);
      await onSession(connection, (session, done) =>
        sendOne(session, address, { durable: true, ttl: message.ttlMs, content_type: 'application/json', group_id: by, body }, done),
      );
    },
  };
}

type Done<T> = (error: Error | undefined, value?: T) => void;

/** Runs `use` on a session of its own, ended once `use` calls back or after MARKER_WAIT_MS. */
function onSession<T>(connection: Connection, use: (session: Session, done: Done<T>) => void): Promise<T | undefined> {
  const session = connection.create_session();
  return new Promise<T | undefined>((resolve, reject) => {
    let finished = false;
    const done: Done<T> = (error, value) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      session.close();
      if (error === undefined) resolve(value);
      else reject(error);
    };
    const timer = setTimeout(
      () => done(new BrokerConnectionError(`The broker did not answer on the pause marker within ${MARKER_WAIT_MS} ms`, { reason: 'timeout' })),
      MARKER_WAIT_MS,
    );
    // Handled here, an error the broker ends the session with stays out of the connection's events.
    session.on('session_error', () => done(new BrokerConnectionError("The broker ended the pause marker's session", { reason: 'channel-closed' })));
    session.begin();
    use(session, done);
  });
}

/** The queue's first message, released back untouched; undefined when the broker drained the credit (`drain`) with none. */
function readOne(session: Session, address: string, drain: boolean, done: Done<Message>): void {
  const receiver = session.open_receiver({ source: { address }, autoaccept: false, credit_window: 0 });
  receiver.once('receiver_open', () => {
    receiver.drain = drain;
    receiver.add_credit(1);
  });
  receiver.once('message', (context: EventContext) => {
    context.delivery?.release({});
    done(undefined, context.message as Message);
  });
  receiver.once('receiver_drained', () => done(undefined));
  receiver.once('receiver_error', (context: EventContext) => done(refusal(context, 'read')));
}

/** Sends `message` and waits for the broker to accept it. */
function sendOne(session: Session, address: string, message: Message, done: Done<void>): void {
  const sender = session.open_sender({ target: { address } });
  sender.once('sendable', () => sender.send(message));
  sender.once('accepted', () => done(undefined));
  for (const outcome of ['rejected', 'released', 'modified'] as const) {
    sender.once(outcome, () => done(new BrokerConnectionError(`The broker did not take the pause marker (${outcome})`, { reason: 'channel-closed' })));
  }
  sender.once('sender_error', (context: EventContext) => done(refusal(context, 'write')));
}

function refusal(context: EventContext, what: string): BrokerConnectionError {
  const error = (context.receiver ?? context.sender)?.error as { condition?: string; description?: string } | undefined;
  return new BrokerConnectionError(`The broker refused to ${what} the pause marker: ${error?.description ?? error?.condition ?? 'no reason given'}`, {
    reason: 'channel-closed',
  });
}

export { amqp10PauseMarker };
