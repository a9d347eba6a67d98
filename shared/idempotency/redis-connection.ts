/**
 * Connections to one Redis (or Valkey) server, as the idempotency guard and the rate limit use them:
 * opened on first use, logged in with a password secret when there is one (read again once when the
 * server refuses it: a rotated password heals itself), replaced when the server dropped them.
 */
import { Redis } from 'ioredis';
import type { SecretStore } from '../amqp/secrets.js';
import type { Logger } from '../observability/logger.js';
import { parseRedisSecret, type RedisCredentials } from './redis-secret.js';
import { STORE_CONNECT_TIMEOUT_MS, STORE_REQUEST_TIMEOUT_MS } from './store-handle.js';

/** Where the password comes from when the server asks for one: a Secrets Manager secret. */
type RedisLogin = {
  readonly secretId: string;
  /** Reads the secret, from its cache unless asked to refresh. */
  readonly secrets: SecretStore;
  /** Told when a refused login makes it read the secret again; never given a secret value. */
  readonly log?: Logger;
};

/** What a connection is for, in its errors and warnings. */
type RedisPurpose = {
  /** `idempotency`, `rate limit`: the prefix of its warnings. */
  readonly label: string;
  /** What a call after `close` fails with. */
  readonly closedMessage: string;
  /** Where to put a password when the server asks for one and no secret gave it. */
  readonly loginHint: string;
};

/** A client being opened, or open, with what the caller made of it; `ready` settles when its connect does. */
type Connection<T> = { readonly client: Redis; readonly adapted: T; readonly ready: Promise<void> };

/** The connections of one caller: each command on a live one, tried once more on a fresh one when the old one had dropped. */
type RedisConnector<T> = {
  run<R>(command: (adapted: T) => Promise<R>): Promise<R>;
  /** Disconnects at once, even with a connect in flight (which then fails): never waits on a hung server. */
  close(): void;
};

/** What the server answers to a login it refuses: no password given (NOAUTH), a wrong one (WRONGPASS; `ERR invalid password` before Redis 6). */
const LOGIN_REFUSED = /^(NOAUTH|WRONGPASS)\b|^ERR invalid password/;
/**
 * What ioredis says of a command on a socket the server closed: its status can still read `ready`
 * while the close is on its way (seen when the server killed the client just before the command).
 */
const SOCKET_GONE = /^Stream isn't writeable|^Connection is closed/;

/**
 * ioredis, not node-redis: ioredis writes a command to the socket in the call that sends it, where
 * node-redis waits for the end of the event-loop turn. The "completed" write then leaves the process
 * as soon as the handler's run returns; a kill in between repeats the effect (docs/idempotency.md).
 */
function newClient(url: string, credentials: RedisCredentials | undefined): Redis {
  return new Redis(url, {
    // Over the URL's own user name, if any (the URL holds no password: options.ts refuses two).
    ...credentials,
    // Connect on first use, from `open`, so that its failure reaches the message that needed it.
    lazyConnect: true,
    // No reconnect loop: a dropped connection fails the commands at once (a retry of the message),
    // and the next call opens a fresh one, instead of commands waiting in an offline queue.
    retryStrategy: () => null,
    enableOfflineQueue: false,
    // The TCP connect only; `open` bounds the handshake as well.
    connectTimeout: STORE_CONNECT_TIMEOUT_MS,
    commandTimeout: STORE_REQUEST_TIMEOUT_MS,
    // A closing socket is destroyed at once instead of waiting for the server's FIN, which a hung
    // server never sends.
    disconnectTimeout: 0,
  });
}

function open<T>(url: string, credentials: RedisCredentials | undefined, adapt: (client: Redis) => T): Connection<T> {
  const client = newClient(url, credentials);
  // ioredis rejects a failed connect with "Connection is closed."; the socket's error says why.
  let socketError: unknown;
  client.on('error', (error: unknown) => {
    socketError = error;
  });
  // connectTimeout covers the TCP connect only; a server that accepts and never answers the
  // handshake (HELLO) would hold the message until Lambda kills the invocation.
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    client.disconnect();
  }, STORE_CONNECT_TIMEOUT_MS);
  const ready = client.connect().then(
    () => clearTimeout(timer),
    (error: unknown) => {
      clearTimeout(timer);
      // Not chained to ioredis's own "Connection is closed.": the store error shows the innermost cause.
      if (timedOut) throw new Error(`no answer from the Redis server within ${STORE_CONNECT_TIMEOUT_MS} ms`);
      throw socketError ?? error;
    },
  );
  return { client, adapted: adapt(client), ready };
}

/**
 * The connections to `url` of one caller, which `adapt` turns into what its commands take (a cache
 * client, a script). A connection the server dropped is replaced on the next call.
 * @example const redis = redisConnector('redis://127.0.0.1:6379', undefined, PURPOSE, (client) => client); await redis.run((client) => client.ping());
 */
function redisConnector<T>(url: string, login: RedisLogin | undefined, purpose: RedisPurpose, adapt: (client: Redis) => T): RedisConnector<T> {
  let current: Promise<Connection<T>> | undefined;
  /** The last client made, for `close`. */
  let latest: Redis | undefined;
  let closed = false;

  const start = async (credentials?: RedisCredentials): Promise<Connection<T>> => {
    if (closed) throw new Error(purpose.closedMessage);
    const opened = open(url, credentials, adapt);
    latest = opened.client;
    await opened.ready;
    return opened;
  };

  const connect = async (): Promise<Connection<T>> => {
    if (login === undefined) {
      return start().catch((error: unknown) => {
        throw isLoginRefused(error) ? new Error(`the Redis server refused the login (${(error as Error).message}): ${purpose.loginHint}`) : error;
      });
    }
    try {
      return await start(await credentialsOf(login, false));
    } catch (error) {
      if (!isLoginRefused(error)) throw error;
      login.log?.warn(`${purpose.label}: the Redis server refused the login; reading the password secret again (rotated?) and retrying once`, {
        secretId: login.secretId,
      });
    }
    try {
      return await start(await credentialsOf(login, true));
    } catch (error) {
      if (!isLoginRefused(error)) throw error;
      throw new Error(
        `the Redis server refused the login with the password of secret ${login.secretId}, also after reading the secret again (${(error as Error).message})`,
      );
    }
  };

  /** A live connection; `stale`, one a command found dropped, is replaced whatever its status says. */
  const connection = async (stale?: Connection<T>): Promise<Connection<T>> => {
    if (closed) throw new Error(purpose.closedMessage);
    const seen = current;
    if (seen !== undefined) {
      const opened = await seen.then(
        (c) => (c.client.status === 'ready' && c !== stale ? c : undefined),
        () => undefined,
      );
      if (opened !== undefined) return opened;
      // The connect failed or the server dropped the socket: the first caller to notice replaces it.
      if (current === seen) current = undefined;
    }
    current ??= connect();
    return current;
  };

  return {
    // A dropped idle connection is often noticed only by the next command: it is tried once more on a
    // fresh connection. The callers' commands repeat harmlessly (see each caller).
    run: async (command) => {
      const first = await connection();
      try {
        return await command(first.adapted);
      } catch (error) {
        if (first.client.status === 'ready' && !(error instanceof Error && SOCKET_GONE.test(error.message))) throw error;
        first.client.disconnect();
        return command((await connection(first)).adapted);
      }
    },
    close: () => {
      closed = true;
      latest?.disconnect();
    },
  };
}

async function credentialsOf(login: RedisLogin, refresh: boolean): Promise<RedisCredentials> {
  return parseRedisSecret(await login.secrets.get(login.secretId, { refresh }), login.secretId);
}

function isLoginRefused(error: unknown): boolean {
  return error instanceof Error && LOGIN_REFUSED.test(error.message);
}

export { redisConnector };
export type { RedisLogin };
