/**
 * Broker credentials from AWS Secrets Manager: a one-function port, the SDK behind it, and a
 * per-container cache. Secret values never enter an error message or a log line; only the secret's id does.
 */
import type { SecretsManagerClientConfig } from '@aws-sdk/client-secrets-manager';
import { ConfigError, SecretFetchError } from '../errors.js';

/** Fetches the string value of a secret by name or ARN. */
type SecretSource = (secretId: string) => Promise<string>;

/** Trying again does not help with these: the secret is missing, forbidden, or the request is wrong. */
const PERMANENT_CODES = new Set(['ResourceNotFoundException', 'AccessDeniedException', 'InvalidParameterException', 'InvalidRequestException', 'DecryptionFailure']);

/**
 * A `SecretSource` on the AWS SDK's `GetSecretValue`. The SDK is imported at the first fetch, so a
 * process that never reads a secret (local runs with `AMQP_URL`) never loads it; in Lambda the SDK
 * comes with the runtime and is not bundled.
 * @example const source = secretsManagerSource({ endpoint: 'http://127.0.0.1:4566', region: 'eu-west-1' });
 */
function secretsManagerSource(clientConfig: SecretsManagerClientConfig = {}): SecretSource {
  let sdk: Promise<{ send: (secretId: string) => Promise<{ SecretString?: string | undefined }> }> | undefined;
  return async (secretId) => {
    sdk ??= import('@aws-sdk/client-secrets-manager').then(({ GetSecretValueCommand, SecretsManagerClient }) => {
      const client = new SecretsManagerClient(clientConfig);
      return { send: (id: string) => client.send(new GetSecretValueCommand({ SecretId: id })) };
    });
    let output: { SecretString?: string | undefined };
    try {
      output = await (await sdk).send(secretId);
    } catch (error) {
      const code = (error as { name?: string }).name ?? 'Error';
      const detail = (error as Error).message ?? String(error);
      throw new SecretFetchError(`Cannot read secret ${secretId} from Secrets Manager: ${code}: ${detail}`, code, { cause: error, retryable: !PERMANENT_CODES.has(code) });
    }
    if (typeof output.SecretString !== 'string') {
      throw new SecretFetchError(`Secret ${secretId} holds no SecretString (binary secrets are not supported)`, 'NoSecretString');
    }
    return output.SecretString;
  };
}

type CacheOptions = {
  /** How long a fetched value is reused. @default 300 */
  readonly maxAgeSeconds?: number;
  /** @default Date.now */
  readonly now?: () => number;
};

/**
 * Caches secret values per warm container. Concurrent reads share one fetch; a failed fetch is not
 * cached. `refresh` forces a fetch, for when the broker refused the cached credentials (rotation).
 * @example
 * const cache = new SecretCache(secretsManagerSource(), { maxAgeSeconds: 300 });
 * const value = await cache.get('boomerang/broker');
 */
class SecretCache {
  private readonly entries = new Map<string, { readonly value: Promise<string>; readonly fetchedAt: number }>();
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  public constructor(
    private readonly source: SecretSource,
    options: CacheOptions = {},
  ) {
    const maxAgeSeconds = options.maxAgeSeconds ?? 300;
    if (!Number.isFinite(maxAgeSeconds) || maxAgeSeconds < 0) throw new ConfigError(`Expected \`maxAgeSeconds\` to be a non-negative number, got ${maxAgeSeconds}`);
    this.maxAgeMs = maxAgeSeconds * 1000;
    this.now = options.now ?? Date.now;
  }

  /** The value of `secretId`: cached while younger than `maxAgeSeconds`, unless `refresh` is set. */
  public get(secretId: string, options: { readonly refresh?: boolean } = {}): Promise<string> {
    const entry = this.entries.get(secretId);
    if (entry && !options.refresh && this.now() - entry.fetchedAt < this.maxAgeMs) return entry.value;
    const value = this.source(secretId);
    const fresh = { value, fetchedAt: this.now() };
    this.entries.set(secretId, fresh);
    value.catch(() => {
      if (this.entries.get(secretId) === fresh) this.entries.delete(secretId);
    });
    return value;
  }
}

export { SecretCache, secretsManagerSource };
export type { SecretSource };
