import { CachePersistenceLayer } from '@aws-lambda-powertools/idempotency/cache';
import type { CacheClient } from '@aws-lambda-powertools/idempotency/cache/types';
import { Redis } from 'ioredis';
import type { SecretStore } from '../amqp/secrets.js';
import type { Logger } from '../observability/logger.js';
import { cacheClient } from './redis-cache-client.js';
import { parseRedisSecret, type RedisCredentials } from './redis-secret.js';
import { STORE_SECRET_VARIABLE } from './store-secret.js';
import { STORE_CONNECT_TIMEOUT_MS, STORE_REQUEST_TIMEOUT_MS, type StoreHandle } from './store-handle.js';

/** A client being opened, or open; `ready` settles when its connect does. */
type Connection = {
  readonly client: Redis;
  /** Powertools' three commands on this client. */
  readonly cache: CacheClient;
  readonly ready: Promise<void>;
};

/** Where the password comes from when the server asks for one: a Secrets Manager secret. */
type RedisLogin = {
  readonly secretId: string;
  /** Reads the secret, from its cache unless asked to refresh. */
  readonly secrets: SecretStore;
  /** Told when a refused login makes it read the secret again; never given a secret value. */
  readonly log?: Logger;
};

/** What the server answers to a login it refuses: no password given (NOAUTH), a wrong one (WRONGPASS; `ERR invalid password` before Redis 6). */
const LOGIN_REFUSED = /^(NOAUTH|WRONGPASS)\b|^ERR invalid password/;

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

function open(url: string, credentials?: RedisCredentials): Connection {
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
  return { client, cache: cacheClient(client), ready };
}

/**
 * A Redis or Valkey store. The client connects on first use, not at cold start, so a function whose
 * messages carry no key never opens it; a connection the server dropped is replaced on the next call.
 * With `login`, each new connection logs in with the password of that secret (cached by `secrets`);
 * when the server refuses it, the secret is read once more, bypassing the cache, and the connection
 * tried once more: a rotated password heals itself, as the broker's does.
 * @example const { persistence, close } = createRedisStore('redis://127.0.0.1:6379');
 */
function createRedisStore(url: string, login?: RedisLogin): StoreHandle {
  let current: Promise<Connection> | undefined;
  /** The last client made, for `close`. */
  let latest: Redis | undefined;
  let closed = false;

  const start = async (credentials?: RedisCredentials): Promise<Connection> => {
    if (closed) throw new Error('the idempotency guard is closed');
    const opened = open(url, credentials);
    latest = opened.client;
    await opened.ready;
    return opened;
  };

  const connect = async (): Promise<Connection> => {
    if (login === undefined) {
      return start().catch((error: unknown) => {
        throw isLoginRefused(error) ? new Error(`the Redis server refused the login (${(error as Error).message}): keep its password in a Secrets Manager secret and name it with ${STORE_SECRET_VARIABLE} (or idempotency.storeSecretId)`) : error;
      });
    }
    try {
      return await start(await credentialsOf(login, false));
    } catch (error) {
      if (!isLoginRefused(error)) throw error;
      login.log?.warn('idempotency: the Redis server refused the login; reading the password secret again (rotated?) and retrying once', { secretId: login.secretId });
    }
    try {
      return await start(await credentialsOf(login, true));
    } catch (error) {
      if (!isLoginRefused(error)) throw error;
      throw new Error(`the Redis server refused the login with the password of secret ${login.secretId}, also after reading the secret again (${(error as Error).message})`);
    }
  };

  const connection = async (): Promise<Connection> => {
    if (closed) throw new Error('the idempotency guard is closed');
    const seen = current;
    if (seen !== undefined) {
      const opened = await seen.then((c) => (c.client.status === 'ready' ? c : undefined), () => undefined);
      if (opened !== undefined) return opened;
      // The connect failed or the server dropped the socket: the first caller to notice replaces it.
      if (current === seen) current = undefined;
    }
    current ??= connect();
    return current;
  };

  /**
   * A dropped idle connection is often noticed only by the next command. That command is tried once
   * more on a fresh connection: safe, because a repeated SET NX finds its own record and answers "in
   * progress" (the message comes back later), and GET, SET and DEL repeat harmlessly.
   */
  const withConnection = async <T>(command: (cache: CacheClient) => Promise<T>): Promise<T> => {
    const first = await connection();
    try {
      return await command(first.cache);
    } catch (error) {
      if (first.client.status === 'ready') throw error;
      return command((await connection()).cache);
    }
  };

  const client: CacheClient = {
    get: (name) => withConnection((cache) => cache.get(name)),
    set: (name, value, options) => withConnection((cache) => cache.set(name, value, options)),
    del: (keys) => withConnection((cache) => cache.del(keys)),
  };

  return {
    persistence: new CachePersistenceLayer({ client }),
    close: async () => {
      closed = true;
      // disconnect returns at once, even with a connect in flight (which then fails): close never
      // waits on a hung server. Every write the guard made was awaited before its run returned, so
      // nothing is cut short.
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

export { createRedisStore };
export type { RedisLogin };
