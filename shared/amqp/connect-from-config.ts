import type { Config } from '../config/config.js';
import type { Logger } from '../observability/logger.js';
import { powertoolsSecretStore, type SecretStore } from './secrets.js';
import { brokerUrls, parseBrokerSecret } from './broker-endpoints.js';
import { type BrokerConnection, connectBroker } from './connection.js';

type ConnectFromConfigOptions = {
  /** Shown in the management UI's connection list. */
  readonly connectionName: string;
  /** Where secrets come from. @default one Powertools SecretsProvider per container, values SECRET_CACHE_SECONDS old at most */
  readonly secrets?: SecretStore;
  /** Told when a refused login makes it read the secret again; never given a secret value. */
  readonly log?: Logger;
};

/** The per-container store, made at the first use (a process that reads no secret never loads the SDK). */
let containerSecrets: SecretStore | undefined;

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

/**
 * The broker URLs the config names: `AMQP_URL`'s, or those built from the cached `AMQP_SECRET_ID`
 * secret (read again, bypassing the cache, with `refresh`).
 */
async function brokerUrlsFromConfig(config: Config, secrets?: SecretStore, refresh = false): Promise<readonly string[]> {
  const secret = config.amqpSecret;
  if (secret === undefined) return config.amqpUrls;
  const store = secrets ?? containerSecretStore(secret.cacheSeconds);
  return brokerUrls(parseBrokerSecret(await store.get(secret.secretId, { refresh }), secret.secretId), secret);
}

/** The container's one secret store, made on first use. */
function containerSecretStore(maxAgeSeconds: number): SecretStore {
  containerSecrets ??= powertoolsSecretStore({ maxAgeSeconds });
  return containerSecrets;
}

/** `connectBroker` sets `reason` when the broker answered ACCESS_REFUSED (403) to the login. */
function isLoginRefused(error: unknown): boolean {
  return error instanceof Error && error.name === 'BrokerConnectionError' && (error as { reason?: unknown }).reason === 'login-refused';
}

export { brokerUrlsFromConfig, connectFromConfig };
export type { ConnectFromConfigOptions };
