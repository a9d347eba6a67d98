/**
 * The Redis store's login from a Secrets Manager secret. Pure: no fetch, no connection. Errors name
 * the secret, never a value from it.
 */
import { ConfigError } from '../errors.js';

/** What the store logs in with: the password, and the ACL user when the secret names one. */
type RedisCredentials = { readonly password: string; readonly username?: string };

const SHAPES = 'the password alone, or {"password": "...", "username": "..."}';

/**
 * Reads a secret string: a value that parses as a JSON object is read as `{"password", "username"?}`
 * (other keys are ignored: a secret may also hold the host); anything else is the password itself, as
 * it is (not trimmed).
 * @example parseRedisSecret('{"username":"boomerang","password":"s3cret"}', 'boomerang/redis') // { password: 's3cret', username: 'boomerang' }
 * @example parseRedisSecret('s3cret', 'boomerang/redis') // { password: 's3cret' }
 */
function parseRedisSecret(secretString: string, secretId: string): RedisCredentials {
  const parsed = jsonObject(secretString);
  if (parsed === undefined) {
    if (secretString === '') throw new ConfigError(`Secret ${secretId} is empty; expected ${SHAPES}`);
    return { password: secretString };
  }
  const { password, username } = parsed;
  if (typeof password !== 'string' || password === '')
    throw new ConfigError(`Secret ${secretId} is a JSON object without a non-empty "password" string; expected ${SHAPES}`);
  if (username === undefined) return { password };
  if (typeof username !== 'string' || username === '') throw new ConfigError(`Secret ${secretId}: "username" must be a non-empty string when given`);
  return { password, username };
}

/** The object `text` holds as JSON, or undefined when it is not a JSON object. */
function jsonObject(text: string): Record<string, unknown> | undefined {
  if (!text.trimStart().startsWith('{')) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    // Not JSON after all: a password that starts with `{`.
    return undefined;
  }
}

export { parseRedisSecret };
export type { RedisCredentials };
