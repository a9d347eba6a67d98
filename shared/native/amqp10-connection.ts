import type { Socket } from 'node:net';
import type { Connection, EventContext } from 'rhea';
import type { ConnectFailure } from '../amqp/connect-failure.js';
import type { CorkableOutput } from './settlement-writer.js';
import { BrokerConnectionError } from '../errors.js';
import { redactText, redactUrl } from '../observability/redact.js';
import { attemptAmqp10 } from './amqp10-attempt.js';
import { explainAmqp10Failure } from './amqp10-failure.js';

type Amqp10ConnectOptions = {
  /** Tried in turn (round robin) until one answers or the timeout passes. */
  readonly urls: readonly string[];
  readonly connectTimeoutMs: number;
  /** Shown in the management UI's connection list, and the start of the container id. */
  readonly connectionName: string;
};

/** One invocation's AMQP 1.0 connection. Always `close()` it, whatever happened. */
type Amqp10Connection = {
  /** Open. */
  readonly connection: Connection;
  /** The endpoint that answered, password redacted. */
  readonly endpoint: string;
  /** The `version` the broker named in its open frame's properties (RabbitMQ: '4.3.6'). */
  readonly brokerVersion: string | undefined;
  /** Resolves (never rejects) with a BrokerConnectionError (`connection-lost`) when the connection drops before `close()`. */
  readonly lost: Promise<Error>;
  /** The socket rhea writes to, for a SettlementWriter to hold while it settles a pass. */
  readonly output: CorkableOutput;
  /** Idempotent; resolves when the socket closed, or after CLOSE_TIMEOUT_MS. */
  close(): Promise<void>;
};

const RETRY_PAUSE_MS = 200;
/** How long close() waits for the broker's close frame before it cuts the socket. */
const CLOSE_TIMEOUT_MS = 1_000;

/**
 * Opens an AMQP 1.0 connection with rhea, round robin over the endpoints until one answers or
 * `connectTimeoutMs` passes, as `connectBroker` does for amqplib. A `BrokerConnectionError` names each
 * endpoint (without passwords), what went wrong there and what to check; it gives up at once when every
 * endpoint failed in a way another attempt cannot mend (login, vhost, TLS, a broker without AMQP 1.0).
 * RabbitMQ 4.3 answers a wrong password or vhost only after 3 s: give `connectTimeoutMs` more than that.
 * @example
 * const broker = await connectAmqp10({ urls: ['amqp://guest:guest@127.0.0.1:5674'], connectTimeoutMs: 5000, connectionName: 'orders-retry' });
 * try { broker.connection.open_receiver({ source: { address: '/queues/orders' }, autoaccept: false }); } finally { await broker.close(); }
 */
async function connectAmqp10(options: Amqp10ConnectOptions): Promise<Amqp10Connection> {
  const deadline = Date.now() + options.connectTimeoutMs;
  const failures = new Map<string, ConnectFailure>();
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    const url = options.urls[attempt % options.urls.length] as string;
    if (failures.get(url)?.final !== true) {
      const result = await attemptAmqp10(url, options.connectionName, deadline - Date.now());
      if (result.kind === 'open') return opened(result.connection, result.socket, url);
      failures.set(url, explainAmqp10Failure(result.outcome, url));
    }
    if (options.urls.every((u) => failures.get(u)?.final === true)) break;
    // After a round over every endpoint, pause before the next: a restarting broker needs a moment.
    if (attempt % options.urls.length === options.urls.length - 1)
      await new Promise((r) => setTimeout(r, Math.max(0, Math.min(RETRY_PAUSE_MS, deadline - Date.now()))));
  }
  throw failedError(options, failures);
}

/** Wraps an open connection: `lost` resolves when it drops (or the broker closes it) before `close()`. */
function opened(connection: Connection, socket: Socket, url: string): Amqp10Connection {
  let closing = false;
  let closed: Promise<void> | undefined;
  const lost = new Promise<Error>((resolve) => {
    const drop = (context: EventContext): void => {
      if (closing) return;
      const cause = context.error as Error | undefined;
      resolve(
        new BrokerConnectionError(`Lost the AMQP 1.0 connection to the broker: ${redactText(cause?.message ?? 'closed')}`, {
          cause,
          reason: 'connection-lost',
        }),
      );
    };
    // 'connection_close' is the broker's close frame (rabbitmqctl close_connection, a shutdown); 'disconnected' a dead socket.
    connection.on('connection_close', drop);
    connection.on('disconnected', drop);
  });
  const version = connection.properties?.version;
  return {
    connection,
    endpoint: redactUrl(url),
    brokerVersion: typeof version === 'string' ? version : undefined,
    lost,
    output: socket,
    close() {
      closing = true;
      closed ??= new Promise<void>((resolve) => {
        if (socket.destroyed) return resolve();
        // An error (not a bare destroy) makes rhea run its disconnect path, which clears its heartbeat timers.
        const cut = setTimeout(() => socket.destroy(new Error('the broker did not answer close in time')), CLOSE_TIMEOUT_MS);
        socket.once('close', () => {
          clearTimeout(cut);
          resolve();
        });
        connection.close();
      });
      return closed;
    },
  };
}

/** The error for a connect that failed: each endpoint's last failure, or the timeout when none came. */
function failedError(options: Amqp10ConnectOptions, failures: ReadonlyMap<string, ConnectFailure>): BrokerConnectionError {
  const tried = options.urls.filter((u) => failures.has(u)).map((u) => ({ url: redactUrl(u), failure: failures.get(u) as ConnectFailure }));
  if (tried.length === 0) {
    return new BrokerConnectionError(
      `Cannot open AMQP 1.0 to ${options.urls.map(redactUrl).join(', ')}: no broker answered within ${options.connectTimeoutMs} ms (CONNECT_TIMEOUT_MS)`,
      { reason: 'timeout' },
    );
  }
  const gaveUp = tried.every((t) => t.failure.final) ? '' : ` (tried for ${options.connectTimeoutMs} ms, CONNECT_TIMEOUT_MS)`;
  const each = tried.map((t) => `${t.url}: ${t.failure.explanation}`).join('; ');
  return new BrokerConnectionError(`Cannot open AMQP 1.0 to ${tried.length === 1 ? '' : `any of ${options.urls.length} endpoints: `}${each}${gaveUp}`, {
    reason: tried[0]?.failure.reason,
  });
}

export { connectAmqp10 };
export type { Amqp10Connection };
