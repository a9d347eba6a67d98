/**
 * RabbitMQ 4.x's management API over AMQP 1.0 ("HTTP over AMQP"): a link pair on the address
 * `/management` carries requests (`subject`: the HTTP method, `to`: the path, `reply_to: '$me'`) and
 * their responses (`subject`: the status code, `correlation_id`: the request's `message_id`, the body
 * an AMQP value). It is how a native function, which has no 0-9-1 connection, reads a queue.
 *
 * Measured on RabbitMQ 4.3.6 (rhea 3.0.5, tcp_no_delay, client and broker on one machine):
 * - `GET /queues/<percent-encoded name>` answers 200 with a map: `message_count` (what a passive
 *   declare counts), `consumer_count`, `name`, `vhost`, `durable`, `auto_delete`, `exclusive`, `type`
 *   (`quorum`, `classic`, `stream`), `arguments` (the queue's OWN `x-*` arguments, as declared), and
 *   `leader`, `replicas`; no policy, neither its name nor its definition (a queue set up by a policy
 *   shows only `x-queue-type`). A missing queue answers 404 with a text body
 *   ("queue 'q' in vhost '/' not found"). The broker checks no permission for it.
 * - Both links of the pair must have the same name, on one session; the broker ends the session
 *   ("received transfer on half open management link pair") when a request comes on a half-open pair.
 *   rhea files a session's links by name, so the receiver is attached once the sender is open, on a
 *   session of its own (the work queue's link never shares it).
 * - Attaching the pair took 4-7 ms, one GET 0.4-1.5 ms (median 0.5, 50 in a row).
 * - `PUT /queues/<name>` with a map `{ durable, arguments }` declares a queue: 201 when it made it,
 *   200 when it was there with the same arguments, 409 with other ones (the text names the argument).
 *   Both 200 and 201 carry the same map as a `GET`, counts included (test/integration/pause-marker.test.ts).
 */
import type { Connection, EventContext, Message, Receiver, Sender, Session } from 'rhea';
import { BrokerConnectionError } from '../errors.js';

/** A response: the status code (`'200'`, `'404'`) and the body, as rhea decoded it. */
type ManagementResponse = { readonly status: string; readonly body: unknown };

/** One request; the port the queue reading is written against (tests pass a fake). */
type ManagementRequest = (method: 'GET', path: string) => Promise<ManagementResponse>;

/** What `GET /queues/<name>` says about a queue. */
type QueueInfo = {
  readonly name: string;
  /** `quorum`, `classic` or `stream`. */
  readonly type: string;
  /** The queue's own `x-*` arguments, as declared; a policy's keys are not among them. */
  readonly arguments: Readonly<Record<string, string | number | boolean>>;
  /** Ready messages (what a passive declare counts). */
  readonly messageCount: number;
  readonly consumerCount: number;
};

/** How long one request (or attaching the pair) may take before it fails. */
const DEFAULT_MANAGEMENT_TIMEOUT_MS = 5_000;

/** The link pair's name: both links carry it, as the Link Pair spec asks. */
const LINK_PAIR_NAME = 'boomerang-management';

const PAIR = { address: '/management' };

/** The management API on one AMQP 1.0 connection; `close()` ends its session (closing the connection does too). */
class Amqp10Management {
  private readonly pending = new Map<string, (response: ManagementResponse) => void>();
  private nextId = 0;

  private constructor(
    private readonly session: Session,
    private readonly sender: Sender,
    receiver: Receiver,
    private readonly timeoutMs: number,
  ) {
    receiver.on('message', (context: EventContext) => {
      const message = context.message as Message;
      const answer = this.pending.get(String(message.correlation_id));
      this.pending.delete(String(message.correlation_id));
      answer?.({ status: String(message.subject), body: message.body as unknown });
    });
  }

  /**
   * Attaches the link pair on a session of its own. Rejects with a `BrokerConnectionError` when the
   * broker refuses it or does not answer within `timeoutMs`.
   * @example
   * const management = await Amqp10Management.open(broker.connection);
   * const queue = await management.getQueue('orders.parked'); // undefined when it does not exist
   */
  public static async open(connection: Connection, timeoutMs = DEFAULT_MANAGEMENT_TIMEOUT_MS): Promise<Amqp10Management> {
    const session = connection.create_session();
    session.begin();
    const link = { name: LINK_PAIR_NAME, snd_settle_mode: 1, properties: { paired: true } };
    try {
      const sender = await attached<Sender>(session.open_sender({ ...link, target: PAIR }), 'sender', timeoutMs);
      // The broker sends its responses settled: nothing to accept.
      const receiver = await attached<Receiver>(
        session.open_receiver({ ...link, source: PAIR, rcv_settle_mode: 0, credit_window: 10, autoaccept: false }),
        'receiver',
        timeoutMs,
      );
      return new Amqp10Management(session, sender, receiver, timeoutMs);
    } catch (error) {
      session.close();
      throw error;
    }
  }

  /** Sends one request and waits for its response, at most `timeoutMs` (by default the one given to `open`). */
  public request(method: 'GET' | 'PUT', path: string, timeoutMs = this.timeoutMs, body: unknown = null): Promise<ManagementResponse> {
    return new Promise((resolve, reject) => {
      const id = `boomerang-${++this.nextId}`;
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(
          new BrokerConnectionError(`The broker's management API (AMQP 1.0, /management) did not answer ${method} ${path} within ${timeoutMs} ms`, {
            reason: 'timeout',
          }),
        );
      }, timeoutMs);
      this.pending.set(id, (response) => {
        clearTimeout(timer);
        resolve(response);
      });
      // The broker reads a GET's body as an AMQP null: rhea writes one for `body: null`.
      this.sender.send({ message_id: id, to: path, subject: method, reply_to: '$me', body });
    });
  }

  /** The queue `name` of the connection's vhost, or `undefined` when it does not exist (404). */
  public getQueue(name: string, timeoutMs = this.timeoutMs): Promise<QueueInfo | undefined> {
    return getQueue((method, path) => this.request(method, path, timeoutMs), name);
  }

  /**
   * Declares the durable queue `name` of the connection's vhost with `args` (`PUT /queues/<name>`), or
   * finds it there as declared, and says what the broker answered it is (its counts); any other answer
   * (409: it has other arguments), or a body that is not a queue, is a `BrokerConnectionError`.
   */
  public async declareQueue(name: string, args: Readonly<Record<string, string | number>>): Promise<QueueInfo> {
    const path = `/queues/${encodeURIComponent(name)}`;
    const { status, body } = await this.request('PUT', path, this.timeoutMs, { durable: true, arguments: args });
    const info = status === '200' || status === '201' ? queueInfoOf(body) : undefined;
    if (info === undefined)
      throw new BrokerConnectionError(
        `The broker's management API answered PUT ${path} with ${status}: ${String(typeof body === 'string' ? body : status).slice(0, 300)}`,
        { reason: 'channel-closed' },
      );
    return info;
  }

  public close(): void {
    this.session.close();
  }
}

/** Resolves with the link once the broker attached it; a refusal or the timeout rejects. */
function attached<L extends Sender | Receiver>(link: L, role: 'sender' | 'receiver', timeoutMs: number): Promise<L> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new BrokerConnectionError(`The broker did not attach the management API's ${role} link (AMQP 1.0, /management) within ${timeoutMs} ms`, {
            reason: 'timeout',
          }),
        ),
      timeoutMs,
    );
    link.once(`${role}_open`, () => {
      clearTimeout(timer);
      resolve(link);
    });
    link.once(`${role}_error`, (context: EventContext) => {
      clearTimeout(timer);
      const error = (context.sender ?? context.receiver)?.error as { condition?: string; description?: string } | undefined;
      reject(
        new BrokerConnectionError(
          `The broker refused the management API's ${role} link (AMQP 1.0, /management): ${error?.description ?? error?.condition ?? 'no reason given'}`,
          { reason: 'channel-closed' },
        ),
      );
    });
  });
}

/**
 * `GET /queues/<name>` through `request`: the queue, `undefined` on 404; any other answer, or a body
 * that is not a queue, is a `BrokerConnectionError` naming the status and what the broker said.
 * @example await getQueue(management.request, 'orders') // { name: 'orders', type: 'quorum', arguments: {...}, messageCount: 3, consumerCount: 1 }
 */
async function getQueue(request: ManagementRequest, name: string): Promise<QueueInfo | undefined> {
  const path = `/queues/${encodeURIComponent(name)}`;
  const { status, body } = await request('GET', path);
  if (status === '404') return undefined;
  const info = status === '200' ? queueInfoOf(body) : undefined;
  if (info !== undefined) return info;
  const said = typeof body === 'string' ? body : JSON.stringify(body, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
  throw new BrokerConnectionError(`The broker's management API answered GET ${path} with ${status}: ${said?.slice(0, 300) ?? 'no body'}`, {
    reason: 'channel-closed',
  });
}

/** The queue a 200 body describes, or `undefined` when the body is not one. */
function queueInfoOf(body: unknown): QueueInfo | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const map = body as Record<string, unknown>;
  const messageCount = count(map.message_count);
  if (typeof map.name !== 'string' || typeof map.type !== 'string' || messageCount === undefined) return undefined;
  const given = typeof map.arguments === 'object' && map.arguments !== null ? (map.arguments as Record<string, unknown>) : {};
  const args = Object.fromEntries(
    Object.entries(given).flatMap(([key, value]) => {
      const plain = typeof value === 'bigint' ? Number(value) : value;
      return typeof plain === 'string' || typeof plain === 'number' || typeof plain === 'boolean' ? [[key, plain]] : [];
    }),
  );
  return { name: map.name, type: map.type, arguments: args, messageCount, consumerCount: count(map.consumer_count) ?? 0 };
}

/** An AMQP ulong/uint as rhea gives it (a number, or a bigint past 2^53). */
function count(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  if (typeof value === 'bigint' && value >= 0n) return Number(value);
  return undefined;
}

export { Amqp10Management, getQueue };
export type { ManagementRequest, ManagementResponse, QueueInfo };
