import { AmqpConnectionManagerClass, type AmqpConnectionManager } from 'amqp-connection-manager';
import type { ChannelModel } from 'amqplib';
import { BrokerConnectionError } from '../errors.js';
import { redactText, redactUrl } from '../observability/redact.js';
import { type ConnectFailure, explainConnectFailure } from './connect-failure.js';

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
 * timeout), but never lets it retry forever: on timeout, refusal or a misconfiguration the manager
 * is closed and a `BrokerConnectionError` names each endpoint (without passwords), what went wrong
 * there and what to check. It gives up at once when every endpoint failed in a way another attempt
 * cannot mend (login, vhost, TLS certificate), and waits out the timeout otherwise (a broker that
 * is restarting refuses connections for a few seconds).
 */
async function connectBroker(options: ConnectOptions): Promise<BrokerConnection> {
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
  const failures = new Map<string, ConnectFailure>();
  let connectedUrl: string | undefined;
  manager.on('connect', ({ url }: { url: unknown }) => {
    connectedUrl = String(url);
  });
  let giveUp: (error: Error) => void = () => undefined;
  const hopeless = new Promise<never>((_resolve, reject) => {
    giveUp = reject;
  });
  manager.on('connectFailed', ({ err, url }: { err: Error; url: unknown }) => {
    failures.set(String(url), explainConnectFailure(err, String(url)));
    if (options.urls.every((u) => failures.get(u)?.final === true)) giveUp(err);
  });
  try {
    await Promise.race([manager.connect({ timeout: options.connectTimeoutMs }), hopeless]);
  } catch (error) {
    await manager.close().catch(() => undefined);
    throw connectError(options, failures, error);
  }
  const connection = manager.connection;
  if (connection === undefined) {
    await manager.close().catch(() => undefined);
    throw new BrokerConnectionError(`Cannot connect to ${options.urls.map(redactUrl).join(', ')}: connected, then lost the connection at once`);
  }
  let closing = false;
  const lost = new Promise<Error>((resolve) => {
    manager.once('disconnect', ({ err }: { err?: Error }) => {
      if (!closing) resolve(new BrokerConnectionError(`Lost the connection to the broker: ${redactText(err?.message ?? 'closed')}`, { cause: err, reason: 'connection-lost' }));
    });
  });
  return {
    connection,
    endpoint: redactUrl(connectedUrl ?? String(options.urls[0])),
    lost,
    async close() {
      closing = true;
      await manager.close().catch(() => undefined);
    },
  };
}

/** The error for a connect that failed: each endpoint's last failure, or the timeout when none came. */
function connectError(options: ConnectOptions, failures: ReadonlyMap<string, ConnectFailure>, error: unknown): BrokerConnectionError {
  const tried = options.urls.filter((u) => failures.has(u));
  if (tried.length === 0) {
    const timeout = `no broker answered within ${options.connectTimeoutMs} ms (CONNECT_TIMEOUT_MS): is RabbitMQ running and reachable?`;
    return new BrokerConnectionError(`Cannot connect to ${options.urls.map(redactUrl).join(', ')}: ${timeout} (last error: ${redactText(String((error as Error).message))})`, {
      reason: 'timeout',
    });
  }
  const explained = tried.map((u) => ({ url: redactUrl(u), failure: failures.get(u) as ConnectFailure }));
  const gaveUp = explained.every((e) => e.failure.final) ? '' : ` (tried for ${options.connectTimeoutMs} ms, CONNECT_TIMEOUT_MS)`;
  const message =
    explained.length === 1 && options.urls.length === 1
      ? `Cannot connect to ${explained[0]?.url}: ${explained[0]?.failure.explanation}${gaveUp}`
      : `Cannot connect to any of ${options.urls.length} endpoints${gaveUp}: ${explained.map((e) => `${e.url}: ${e.failure.explanation}`).join('; ')}`;
  return new BrokerConnectionError(message, { reason: explained[0]?.failure.reason });
}

export { connectBroker };
export type { BrokerConnection, ConnectOptions };
