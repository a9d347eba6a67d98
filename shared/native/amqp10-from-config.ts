import type { Config } from '../config/config.js';
import { brokerUrlsFromConfig, type ConnectFromConfigOptions } from '../amqp/broker-urls-from-config.js';
import { type BrokerConnectionError, isNamedError } from '../errors.js';
import { type Amqp10Connection, connectAmqp10 } from './amqp10-connection.js';

/**
 * Opens the AMQP 1.0 connection to the broker the config names, with the secret logic of
 * `connectFromConfig`: `AMQP_URL` as is, or the URLs built from the cached `AMQP_SECRET_ID` secret; when
 * the broker refuses that login (the password was rotated), the secret is read once more, bypassing
 * the cache, and the connection tried once more.
 * @example
 * const broker = await connectAmqp10FromConfig(config, { connectionName: config.functionName });
 * try { ... } finally { await broker.close(); }
 */
async function connectAmqp10FromConfig(config: Config, options: ConnectFromConfigOptions): Promise<Amqp10Connection> {
  const open = async (refresh: boolean): Promise<Amqp10Connection> =>
    connectAmqp10({
      urls: await brokerUrlsFromConfig(config, options.secrets, refresh),
      connectTimeoutMs: config.connectTimeoutMs,
      connectionName: options.connectionName,
    });
  const secret = config.amqpSecret;
  try {
    return await open(false);
  } catch (error) {
    if (secret === undefined || !isNamedError<BrokerConnectionError>(error, 'BrokerConnectionError') || error.reason !== 'login-refused') throw error;
    options.log?.warn('the broker refused the AMQP 1.0 login; reading the secret again (rotated?) and retrying once', { secretId: secret.secretId });
    return open(true);
  }
}

export { connectAmqp10FromConfig };
