import type { Config } from '../config/config.js';
import { brokerUrlsFromConfig, type ConnectFromConfigOptions } from './broker-urls-from-config.js';
import { type BrokerConnection, connectBroker } from './connection.js';

/**
 * Connects to the broker the config names: `AMQP_URL` as is, or, with `AMQP_SECRET_ID`, the URL built
 * from the cached secret. When the broker refuses that login (the password was rotated), the secret
 * is read once more, bypassing the cache, and the connection tried once more.
 * @example
 * const broker = await connectFromConfig(config, { connectionName: config.functionName });
 * try { ... } finally { await broker.close(); }
 */
async function connectFromConfig(config: Config, options: ConnectFromConfigOptions): Promise<BrokerConnection> {
  const connect = (urls: readonly string[]): Promise<BrokerConnection> =>
    connectBroker({ urls, connectTimeoutMs: config.connectTimeoutMs, connectionName: options.connectionName });
  const secret = config.amqpSecret;
  if (secret === undefined) return connect(config.amqpUrls);
  try {
    return await connect(await brokerUrlsFromConfig(config, options.secrets));
  } catch (error) {
    if (!isLoginRefused(error)) throw error;
    options.log?.warn('the broker refused the login; reading the secret again (rotated?) and retrying once', { secretId: secret.secretId });
    return connect(await brokerUrlsFromConfig(config, options.secrets, true));
  }
}

/** `connectBroker` sets `reason` when the broker answered ACCESS_REFUSED (403) to the login. */
function isLoginRefused(error: unknown): boolean {
  return error instanceof Error && error.name === 'BrokerConnectionError' && (error as { reason?: unknown }).reason === 'login-refused';
}

export { connectFromConfig };
