import { CachePersistenceLayer } from '@aws-lambda-powertools/idempotency/cache';
import type { CacheClient } from '@aws-lambda-powertools/idempotency/cache/types';
import { Redis } from 'ioredis';
import { cacheClient } from './redis-cache-client.js';
import { STORE_CONNECT_TIMEOUT_MS, STORE_REQUEST_TIMEOUT_MS, type StoreHandle } from './store-handle.js';

/** A client being opened, or open; `ready` settles when its connect does. */
type Connection = {
  readonly client: Redis;
  /** Powertools' three commands on this client. */
  readonly cache: CacheClient;
  readonly ready: Promise<void>;
};

/**
 * ioredis, not node-redis: ioredis writes a command to the socket in the call that sends it, where
 * node-redis waits for the end of the event-loop turn. The "completed" write then leaves the process
 * as soon as the handler's run returns; a kill in between repeats the effect (docs/idempotency.md).
 */
function newClient(url: string): Redis {
  return new Redis(url, {
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

function open(url: string): Connection {
  const client = newClient(url);
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
 * @example const { persistence, close } = createRedisStore('redis://127.0.0.1:6379');
 */
function createRedisStore(url: string): StoreHandle {
  let current: Connection | undefined;
  let closed = false;

  const connection = async (): Promise<Connection> => {
    if (closed) throw new Error('the idempotency guard is closed');
    const seen = current;
    if (seen !== undefined) {
      const opened = await seen.ready.then(() => true, () => false);
      if (opened && seen.client.status === 'ready') return seen;
      // The connect failed or the server dropped the socket: the first caller to notice replaces it.
      if (current === seen) current = undefined;
    }
    current ??= open(url);
    const opening = current;
    await opening.ready;
    return opening;
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
      current?.client.disconnect();
    },
  };
}

export { createRedisStore };
