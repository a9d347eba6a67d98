import { once } from 'node:events';
import { AmqpConnectionManagerClass, type AmqpConnectionManager } from 'amqp-connection-manager';
import type { ChannelModel } from 'amqplib';
import { connectError, everyFinal } from './connect-error.js';
import { type ConnectFailure, explainConnectFailure } from './connect-failure.js';

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
 * the connection drops. Fails with the `BrokerConnectionError` connectBroker gives: at once when every
 * endpoint failed for good (a refused login or vhost, a TLS certificate, not an AMQP port), else when
 * none answers within `connectTimeoutMs`.
 * @example
 * const managed = await connectManaged({ urls: config.amqpUrls, connectTimeoutMs: 5000, connectionName: 'boomerang-parked' });
 * const channel = await (await managed.current()).createConfirmChannel();
 */
async function connectManaged(options: ManagedConnectionOptions): Promise<ManagedConnection> {
  const manager = new AmqpConnectionManagerClass([...options.urls], {
    heartbeatIntervalInSeconds: 5,
    reconnectTimeInSeconds: 0.5,
    // `timeout` bounds each attempt, handshake included: without it an attempt on a server that
    // accepts and stays silent never ends, and close() waits for it for ever.
    connectionOptions: { noDelay: true, timeout: options.connectTimeoutMs, clientProperties: { connection_name: options.connectionName } },
  });
  let drops = 0;
  // Each endpoint's last failure since the last connect: the same explanation connectBroker gives.
  const failures = new Map<string, ConnectFailure>();
  let lastError: unknown;
  manager.on('disconnect', () => {
    drops++;
  });
  manager.on('connect', () => failures.clear());
  manager.on('connectFailed', ({ err, url }: { err: Error; url: unknown }) => {
    lastError = err;
    failures.set(String(url), explainConnectFailure(err, String(url)));
  });
  const current = async (): Promise<ChannelModel> => {
    const connection = manager.isConnected() ? manager.connection : undefined;
    if (connection !== undefined) return connection;
    await untilConnected();
    return current();
  };
  const untilConnected = async (): Promise<void> => {
    // The manager retries every half second for ever: a refused login or vhost would only come back
    // refused, so stop at once when every endpoint failed for good, as connectBroker does.
    const stop = new AbortController();
    const onFailed = (): void => {
      if (everyFinal(options.urls, failures)) stop.abort();
    };
    onFailed();
    const timer = setTimeout(() => stop.abort(), options.connectTimeoutMs);
    manager.on('connectFailed', onFailed);
    try {
      await once(manager, 'connect', { signal: stop.signal });
    } catch {
      throw connectError(options.urls, options.connectTimeoutMs, failures, lastError);
    } finally {
      clearTimeout(timer);
      manager.off('connectFailed', onFailed);
    }
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
export type { ManagedConnection };
