import { AmqpConnectionManagerClass, type AmqpConnectionManager } from 'amqp-connection-manager';
import type { ChannelModel } from 'amqplib';
import { BrokerConnectionError } from '../errors.js';
import { redactText, redactUrl } from '../redact.js';

type ConnectOptions = {
  /** Tried in turn (round robin) until one answers or the timeout passes. */
  readonly urls: readonly string[];
  readonly connectTimeoutMs: number;
  /** Shown in the management UI's connection list. */
  readonly connectionName: string;
  /** @default 5 */
  readonly heartbeatSeconds?: number;
};

/** One invocation's broker connection. Always `close()` it, whatever happened. */
type BrokerConnection = {
  readonly connection: ChannelModel;
  /** The endpoint that answered, password redacted. */
  readonly endpoint: string;
  /** Resolves with the cause when the connection drops before `close()`. */
  readonly lost: Promise<Error>;
  close(): Promise<void>;
};

/**
 * Connects with amqp-connection-manager (round robin over the endpoints, failing over within the
 * timeout), but never lets it retry forever: on timeout or refusal the manager is closed and a
 * `BrokerConnectionError` names the endpoints (without passwords) and what to check.
 */
async function connectBroker(options: ConnectOptions): Promise<BrokerConnection> {
  const endpoints = options.urls.map(redactUrl).join(', ');
  const manager: AmqpConnectionManager = new AmqpConnectionManagerClass([...options.urls], {
    heartbeatIntervalInSeconds: options.heartbeatSeconds ?? 5,
    // Fail over to the next endpoint quickly; the overall connect timeout bounds the attempts.
    reconnectTimeInSeconds: 0.2,
    connectionOptions: {
      // Without it, small frames (acks, confirms) wait for Nagle's 40 ms timer.
      noDelay: true,
      timeout: options.connectTimeoutMs,
      clientProperties: { connection_name: options.connectionName },
    },
  });
  let lastFailure = '';
  manager.on('connectFailed', ({ err }: { err: Error }) => {
    lastFailure = redactText(err.message);
  });
  try {
    await manager.connect({ timeout: options.connectTimeoutMs });
  } catch (error) {
    await manager.close().catch(() => undefined);
    const reason = redactText((error as Error).message);
    const refused = /ACCESS-REFUSED|403/.test(reason) || /ACCESS-REFUSED|403/.test(lastFailure);
    const hint = refused
      ? 'the broker refused the login: check the user name and password'
      : `no broker answered within ${options.connectTimeoutMs} ms (CONNECT_TIMEOUT_MS): is RabbitMQ running and reachable?`;
    throw new BrokerConnectionError(`Cannot connect to ${endpoints}: ${hint} (last error: ${lastFailure || reason})`);
  }
  const connection = manager.connection;
  if (connection === undefined) {
    await manager.close().catch(() => undefined);
    throw new BrokerConnectionError(`Cannot connect to ${endpoints}: connected, then lost the connection at once`);
  }
  let closing = false;
  const lost = new Promise<Error>((resolve) => {
    manager.once('disconnect', ({ err }: { err?: Error }) => {
      if (!closing) resolve(new BrokerConnectionError(`Lost the connection to the broker: ${redactText(err?.message ?? 'closed')}`, { cause: err }));
    });
  });
  return {
    connection,
    endpoint: redactUrl(String(options.urls.find((u) => u === currentUrl(manager)) ?? options.urls[0])),
    lost,
    async close() {
      closing = true;
      await manager.close().catch(() => undefined);
    },
  };
}

function currentUrl(manager: AmqpConnectionManager): unknown {
  // amqp-connection-manager keeps the round-robin position private; read it defensively.
  const internal = manager as unknown as { _urls?: unknown[]; _currentUrl?: number };
  return internal._urls?.[(internal._currentUrl ?? 1) - 1];
}

export { connectBroker };
export type { BrokerConnection, ConnectOptions };
