import { once } from 'node:events';
import { AmqpConnectionManagerClass, type AmqpConnectionManager } from 'amqp-connection-manager';
import type { ChannelModel } from 'amqplib';
import { BrokerConnectionError } from '../errors.js';
import { redactUrl } from '../observability/redact.js';
import { explainConnectFailure } from './connect-failure.js';

type ManagedConnectionOptions = {
  /** Tried in turn (round robin), at the start and after each lost connection. */
  readonly urls: readonly string[];
  /** How long to wait for a connection, at the start and after each loss. */
  readonly connectTimeoutMs: number;
  /** Shown in the management UI's connection list. */
  readonly connectionName: string;
};

/** A connection that comes back after it drops; for the long-running tools (parked commands, the local demo). */
type ManagedConnection = {
  /** The open connection, waiting for the reconnect when it just dropped; rejects after `connectTimeoutMs`. */
  current(): Promise<ChannelModel>;
  /** How many times the connection dropped so far: a command compares it before and after a step. */
  readonly drops: number;
  /** The manager itself, for a `ChannelWrapper` (its channel is set up again, and unconfirmed messages re-sent, after a reconnect). */
  readonly manager: AmqpConnectionManager;
  close(): Promise<void>;
};

/**
 * Connects with amqp-connection-manager, which reconnects (round robin over the endpoints) whenever
 * the connection drops. Fails with a `BrokerConnectionError` that explains the last attempt when no
 * endpoint answers within `connectTimeoutMs`.
 * @example
 * const managed = await connectManaged({ urls: config.amqpUrls, connectTimeoutMs: 5000, connectionName: 'boomerang-parked' });
 * const channel = await (await managed.current()).createConfirmChannel();
 */
async function connectManaged(options: ManagedConnectionOptions): Promise<ManagedConnection> {
  const manager = new AmqpConnectionManagerClass([...options.urls], {
    heartbeatIntervalInSeconds: 5,
    reconnectTimeInSeconds: 0.5,
    connectionOptions: { noDelay: true, clientProperties: { connection_name: options.connectionName } },
  });
  let drops = 0;
  let lastFailure: BrokerConnectionError | undefined;
  manager.on('disconnect', () => {
    drops++;
  });
  manager.on('connectFailed', ({ err, url }: { err: Error; url: unknown }) => {
    const failure = explainConnectFailure(err, String(url));
    lastFailure = new BrokerConnectionError(`Cannot connect to ${redactUrl(String(url))}: ${failure.explanation}`, { reason: failure.reason, cause: err });
  });
  const current = async (): Promise<ChannelModel> => {
    const connection = manager.isConnected() ? manager.connection : undefined;
    if (connection !== undefined) return connection;
    const timeout = AbortSignal.timeout(options.connectTimeoutMs);
    try {
      await once(manager, 'connect', { signal: timeout });
    } catch {
      throw lastFailure ?? new BrokerConnectionError(`Cannot connect to ${options.urls.map(redactUrl).join(', ')}: no broker answered within ${options.connectTimeoutMs} ms (CONNECT_TIMEOUT_MS)`, { reason: 'timeout' });
    }
    return current();
  };
  manager.connect().catch(() => undefined);
  try {
    await current();
  } catch (error) {
    await manager.close().catch(() => undefined);
    throw error;
  }
  return {
    current,
    get drops() {
      return drops;
    },
    manager,
    close: () => manager.close().catch(() => undefined),
  };
}

export { connectManaged };
export type { ManagedConnection, ManagedConnectionOptions };
