/**
 * One attempt to open an AMQP 1.0 connection with rhea: it ends open, or with what went wrong. rhea
 * reports a handshake through events, some of them only on the console when nobody listens; this
 * module listens to all of them and turns them into one answer.
 */
import { randomUUID } from 'node:crypto';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { Connection, EventContext } from 'rhea';
import type { Amqp10AttemptOutcome } from './amqp10-failure.js';
import { type RheaConnectOptions, rheaConnectOptions } from './rhea-connect-options.js';

/** An attempt's end: the open connection and its socket, or what the attempt saw. */
type Amqp10Attempt =
  | { readonly kind: 'open'; readonly connection: Connection; readonly socket: Socket }
  | { readonly kind: 'failed'; readonly outcome: Amqp10AttemptOutcome };

/** The AMQP 1.0 protocol header; RabbitMQ sends it only after the SASL login succeeded. */
const AMQP_HEADER = Buffer.from([0x41, 0x4d, 0x51, 0x50, 0x00, 0x01, 0x00, 0x00]);

/**
 * Opens one connection to `url` within `timeoutMs`. It never rejects; a failed attempt leaves no
 * socket and no timer behind.
 * @example
 * const attempt = await attemptAmqp10('amqp://guest:guest@127.0.0.1:5674', 'orders-retry', 5000);
 * if (attempt.kind === 'open') attempt.connection.open_receiver('/queues/orders');
 */
async function attemptAmqp10(url: string, connectionName: string, timeoutMs: number): Promise<Amqp10Attempt> {
  // Loaded on first use: a bundle's other modes (and its cold start) never pay for rhea. rhea shares
  // no module with the rest of the bundle, so its chunk is the only one the bundler splits off for it.
  const { default: rhea } = await import('rhea');
  return new Promise((resolve) => {
    let socket: Socket | undefined;
    let loginAccepted = false;
    let done = false;
    const finish = (attempt: Amqp10Attempt): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      // An error (not a bare destroy) makes rhea run its disconnect path, which clears its heartbeat timers.
      if (attempt.kind === 'failed') socket?.destroy(new Error('connection attempt over'));
      resolve(attempt);
    };
    const fail = (outcome: Amqp10AttemptOutcome): void => finish({ kind: 'failed', outcome });
    const timer = setTimeout(() => fail({ kind: 'timeout', waitedMs: timeoutMs }), Math.max(1, timeoutMs));
    let options: RheaConnectOptions;
    try {
      // AMQP 1.0 names a link's ends by container id and link name: two invocations must not share one.
      options = rheaConnectOptions(url, `${connectionName}-${randomUUID()}`, connectionName);
    } catch (error) {
      fail({ kind: 'disconnected', error, loginAccepted: false });
      return;
    }
    const { dial, open } = options;
    // Our own connect function: only the TLS options we choose reach tls.connect (rhea would pass all
    // of its options, the password included), so Node's default, verified certificates, always holds;
    // and the socket is ours to watch and to destroy.
    const connect = (port: number, host: string, _options: unknown, onConnect: () => void): Socket => {
      socket = dial.tls ? tlsConnect({ port, host, servername: dial.servername }, onConnect) : netConnect({ port, host }, onConnect);
      whenHeaderSeen(socket, () => (loginAccepted = true));
      return socket;
    };
    const connection = rhea
      .create_container({ id: connectionName })
      .connect({ ...open, host: dial.host, port: dial.port, connection_details: () => ({ host: dial.host, port: dial.port, connect }) });
    connection.once('connection_open', () => finish({ kind: 'open', connection, socket: socket as Socket }));
    connection.on('connection_error', (context: EventContext) => fail({ kind: 'refused', error: errorFields(context.error) }));
    connection.on('protocol_error', (error: Error) => fail({ kind: 'protocol', message: String(error?.message ?? error) }));
    connection.on('disconnected', (context: EventContext) => fail({ kind: 'disconnected', error: context.error, loginAccepted }));
    // Without a listener, rhea throws an 'error' event (an unhandled close) out of its socket handler.
    connection.on('error', (error: unknown) => fail({ kind: 'disconnected', error, loginAccepted }));
  });
}

/** Calls `seen` once the AMQP 1.0 header arrives (it may be split across chunks), then stops watching. */
function whenHeaderSeen(socket: Socket, seen: () => void): void {
  let tail = Buffer.alloc(0);
  const watch = (chunk: Buffer): void => {
    const bytes = Buffer.concat([tail, chunk]);
    if (bytes.includes(AMQP_HEADER)) {
      socket.off('data', watch);
      seen();
    } else {
      tail = bytes.subarray(-(AMQP_HEADER.length - 1));
    }
  };
  socket.on('data', watch);
}

function errorFields(error: unknown): { message?: string; condition?: string } {
  const { message, condition } = (error ?? {}) as { message?: unknown; condition?: unknown };
  return { ...(typeof message === 'string' ? { message } : {}), ...(typeof condition === 'string' ? { condition } : {}) };
}

export { attemptAmqp10 };
