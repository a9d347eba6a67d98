/**
 * Broker credentials from AWS Secrets Manager, read through Powertools for AWS Lambda's Parameters
 * utility (SecretsProvider), whose cache keeps a value per warm container for SECRET_CACHE_SECONDS.
 * Secret values never enter an error message or a log line; only the secret's id does.
 */
import type { SecretsManagerClientConfig } from '@aws-sdk/client-secrets-manager';
import { ConfigError, SecretFetchError } from '../errors.js';
import type { SecretsReader } from './powertools-secrets.js';

/** Reads the string value of a secret by name or ARN, from a cache unless `refresh` is set. */
type SecretStore = {
  get(secretId: string, options?: { readonly refresh?: boolean }): Promise<string>;
};

type SecretStoreOptions = {
  /** How long a fetched value is reused by a warm container, in seconds. @default 300 */
  readonly maxAgeSeconds?: number;
  /** The Secrets Manager client's configuration (tests point it at a local endpoint). @default the Lambda runtime's */
  readonly clientConfig?: SecretsManagerClientConfig;
};

/** Trying again does not help with these: the secret is missing, forbidden, or the request is wrong. */
const PERMANENT_CODES = new Set([
  'ResourceNotFoundException',
  'AccessDeniedException',
  'InvalidParameterException',
  'InvalidRequestException',
  'DecryptionFailure',
]);

/**
 * The secret store of the functions: Powertools' SecretsProvider, loaded at the first read (a process
 * that never reads a secret, a local run with AMQP_URL, never loads it or the SDK; in Lambda the SDK
 * comes with the runtime and is not bundled). Concurrent reads of one secret share one fetch, a failed
 * fetch is not cached, and `refresh` fetches afresh (the broker refused the cached password: rotation).
 * @example
 * const secrets = powertoolsSecretStore({ maxAgeSeconds: 300 });
 * const value = await secrets.get('boomerang/broker');
 */
function powertoolsSecretStore(options: SecretStoreOptions = {}): SecretStore {
  const maxAgeSeconds = options.maxAgeSeconds ?? 300;
  if (!Number.isFinite(maxAgeSeconds) || maxAgeSeconds < 0)
    throw new ConfigError(`Expected \`maxAgeSeconds\` to be a non-negative number, got ${maxAgeSeconds}`);
  let reader: Promise<SecretsReader> | undefined;
  const inFlight = new Map<string, Promise<string>>();
  const read = async (secretId: string, refresh: boolean): Promise<string> => {
    reader ??= import('./powertools-secrets.js').then(({ createSecretsReader }) => createSecretsReader(options.clientConfig ?? {}));
    let value: unknown;
    try {
      value = await (await reader).get(secretId, { maxAge: maxAgeSeconds, forceFetch: refresh });
    } catch (error) {
      // Powertools wraps the SDK's error (GetParameterError); its cause carries the service's code.
      const sdkError = ((error as { cause?: unknown }).cause ?? error) as { name?: string; message?: string };
      const code = sdkError.name ?? 'Error';
      throw new SecretFetchError(`Cannot read secret ${secretId} from Secrets Manager: ${code}: ${sdkError.message ?? String(error)}`, code, {
        cause: error,
        retryable: !PERMANENT_CODES.has(code),
      });
    }
    if (typeof value !== 'string') throw new SecretFetchError(`Secret ${secretId} holds no SecretString (binary secrets are not supported)`, 'NoSecretString');
    return value;
  };
  return {
    get(secretId, { refresh = false } = {}) {
      const key = `${refresh ? 'fresh' : 'cached'}:${secretId}`;
      const pending = inFlight.get(key);
      if (pending) return pending;
      const value = read(secretId, refresh).finally(() => inFlight.delete(key));
      inFlight.set(key, value);
      return value;
    },
  };
}

export { powertoolsSecretStore };
export type { SecretStore };
