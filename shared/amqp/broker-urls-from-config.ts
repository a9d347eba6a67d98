/**
 * The broker URLs a config names, for either protocol's connection: `AMQP_URL`'s, or those built from
 * the `AMQP_SECRET_ID` secret, read through the container's one cached store. Kept apart from
 * connect-from-config.ts, which loads amqplib: a native function's bundle needs the URLs, not amqplib.
 */
import type { Config } from '../config/config.js';
import type { Logger } from '../observability/logger.js';
import { brokerUrls, parseBrokerSecret } from './broker-endpoints.js';
import { powertoolsSecretStore, type SecretStore } from './secrets.js';

/** How a connection is opened from the config, over AMQP 0-9-1 or 1.0. */
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
 * The broker URLs the config names: `AMQP_URL`'s, or those built from the cached `AMQP_SECRET_ID`
 * secret (read again, bypassing the cache, with `refresh`).
 * @example const [url] = await brokerUrlsFromConfig(config);
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

export { brokerUrlsFromConfig };
export type { ConnectFromConfigOptions };
