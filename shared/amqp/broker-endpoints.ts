/**
 * Broker URLs from a Secrets Manager secret. Pure: no fetch, no connection. Errors name the secret
 * and the problem, never a value from it.
 */
import type { AmqpSecretConfig, Config } from '../config/config.js';
import { ConfigError } from '../errors.js';

/** What a broker secret may hold: a URL (or comma-separated URLs), or the event source's shape. */
type BrokerSecret =
  | { readonly kind: 'url'; readonly urls: readonly string[] }
  | { readonly kind: 'credentials'; readonly username: string; readonly password: string };

const AMQP_URL = /^amqps?:\/\/[^/]/i;

/**
 * Reads a secret string: `{"url": "amqps://user:pass@host:5671/vhost"}` (`url` wins when both are
 * there) or `{"username": "...", "password": "..."}`, the shape the Lambda event source mapping reads.
 * @example parseBrokerSecret('{"username":"app","password":"s3cret"}', 'boomerang/broker') // { kind: 'credentials', ... }
 */
function parseBrokerSecret(secretString: string, secretId: string): BrokerSecret {
  let parsed: unknown;
  try {
    parsed = JSON.parse(secretString);
  } catch {
    // JSON.parse's message quotes the input: it must not reach the error.
    throw new ConfigError(`Secret ${secretId} is not JSON; expected {"url": ...} or {"username": ..., "password": ...}`);
  }
  const { url, username, password } = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  if (typeof url === 'string') {
    const urls = url
      .split(',')
      .map((u) => u.trim())
      .filter((u) => u !== '');
    if (urls.length === 0 || !urls.every((u) => AMQP_URL.test(u)))
      throw new ConfigError(`Secret ${secretId}: "url" must hold amqp:// or amqps:// URLs separated by commas`);
    return { kind: 'url', urls };
  }
  if (typeof username === 'string' && username !== '' && typeof password === 'string') return { kind: 'credentials', username, password };
  throw new ConfigError(`Secret ${secretId} holds neither a "url" nor a "username" and "password" (strings)`);
}

/**
 * The URLs to connect to. A credentials secret is combined with AMQP_HOST (required), AMQP_PORT
 * (default 5671 with TLS, else 5672), AMQP_VHOST and AMQP_TLS; the user name and password are encoded
 * so that any character survives the URL.
 * @example
 * brokerUrls({ kind: 'credentials', username: 'app', password: 'p@ss' }, { host: 'b-1.mq.eu-west-1.amazonaws.com', port: undefined, vhost: '/', tls: true, ... })
 * // ['amqps://app:p%40ss@b-1.mq.eu-west-1.amazonaws.com:5671/%2F']
 */
function brokerUrls(secret: BrokerSecret, config: AmqpSecretConfig): string[] {
  if (secret.kind === 'url') return [...secret.urls];
  if (config.host === undefined) throw new ConfigError(`AMQP_HOST is required: secret ${config.secretId} holds a username and password but no broker address`);
  const scheme = config.tls ? 'amqps' : 'amqp';
  const port = config.port ?? (config.tls ? 5671 : 5672);
  const host = config.host.includes(':') && !config.host.startsWith('[') ? `[${config.host}]` : config.host;
  return [`${scheme}://${encodeCredential(secret.username)}:${encodeCredential(secret.password)}@${host}:${port}/${encodeURIComponent(config.vhost)}`];
}

/**
 * Percent-encodes a user name or password for an AMQP URL. ASCII gets the standard encoding; any
 * other character gets `%uXXXX`, because amqplib decodes credentials with the legacy `unescape()`,
 * which reads `%C3%A4` as two Latin-1 characters (the broker then refuses the login) but `%u00E4` as `ä`.
 * @example encodeCredential('pä@ss') // 'p%u00E4%40ss'
 */
function encodeCredential(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    out += unit < 0x80 ? encodeURIComponent(value[i] as string) : `%u${unit.toString(16).toUpperCase().padStart(4, '0')}`;
  }
  return out;
}

/**
 * The user and password an AMQP URL logs in with, read as amqplib reads them: decoded with the legacy
 * `unescape` (which reads `%uXXXX`, the form `encodeCredential` writes for non-ASCII characters), and
 * guest/guest when the URL names neither.
 * @example loginOfUrl(new URL('amqps://app:p%u00E4ss@b-1.mq.eu-west-1.amazonaws.com/prod')) // { username: 'app', password: 'päss' }
 */
function loginOfUrl(url: URL): { readonly username: string; readonly password: string } {
  if (url.username === '' && url.password === '') return { username: 'guest', password: 'guest' };
  return { username: unescape(url.username), password: unescape(url.password) };
}

/**
 * The vhost an AMQP URL connects to, read as amqplib reads it: the path without its leading `/`,
 * percent-decoded; `/` when the path is empty.
 * @example vhostOfUrl('amqps://b-1.mq.eu-west-1.amazonaws.com:5671/%2F') // '/'
 */
function vhostOfUrl(url: string): string {
  let path = '';
  try {
    path = new URL(url).pathname.slice(1);
    return path === '' ? '/' : decodeURIComponent(path);
  } catch {
    // Not a URL, or a stray `%`: amqplib would pass such a path through undecoded.
    return path === '' ? '/' : path;
  }
}

/**
 * The vhost a config connects to: its broker secret's (AMQP_VHOST), else its first URL's.
 * @example vhostOfConfig(loadConfig({ AMQP_URL: 'amqp://guest:guest@localhost/prod' })) // 'prod'
 */
function vhostOfConfig(config: Pick<Config, 'amqpSecret' | 'amqpUrls'>): string {
  return config.amqpSecret?.vhost ?? vhostOfUrl(config.amqpUrls[0] ?? '');
}

export { brokerUrls, encodeCredential, loginOfUrl, parseBrokerSecret, vhostOfConfig, vhostOfUrl };
