import { CachePersistenceLayer } from '@aws-lambda-powertools/idempotency/cache';
import type { CacheClient } from '@aws-lambda-powertools/idempotency/cache/types';
import { createClient } from '@redis/client';
import { STORE_CONNECT_TIMEOUT_MS, STORE_REQUEST_TIMEOUT_MS, type StoreHandle } from './store-handle.js';

type RedisClient = ReturnType<typeof newClient>;

type Connection = {
  readonly client: RedisClient;
  /** The three commands Powertools uses, each with a timeout. */
  readonly cache: CacheClient;
};

function newClient(url: string) {
  return createClient({
    url,
    // No reconnect loop: a dropped connection fails the commands at once (a retry of the message),
    // and the next call opens a fresh one, instead of commands waiting in an offline queue.
    socket: { connectTimeout: STORE_CONNECT_TIMEOUT_MS, reconnectStrategy: false },
    disableOfflineQueue: true,
  });
}

/**
 * A Redis or Valkey store. The client connects on first use, not at cold start, so a function whose
 * messages carry no key never opens it; a connection the server dropped is replaced on the next call.
 * @example const { persistence, close } = createRedisStore('redis://127.0.0.1:6379');
 */
function createRedisStore(url: string): StoreHandle {
  let pending: Promise<Connection> | undefined;
  let closed = false;

  const open = async (): Promise<Connection> => {
    const client = newClient(url);
    // An 'error' event with no listener would crash the process; the failed command reports it instead.
    client.on('error', () => undefined);
    // connectTimeout covers the TCP connect only; a server that accepts and never answers the
    // handshake (HELLO) would hold the message until Lambda kills the invocation.
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      client.destroy();
    }, STORE_CONNECT_TIMEOUT_MS);
    try {
      await client.connect();
    } catch (error) {
      throw timedOut ? new Error(`no answer from the Redis server within ${STORE_CONNECT_TIMEOUT_MS} ms`, { cause: error }) : error;
    } finally {
      clearTimeout(timer);
    }
    const commands = client.withCommandOptions({ timeout: STORE_REQUEST_TIMEOUT_MS });
    // Powertools types the values loosely (any cache client); it only ever passes strings and its SET options.
    const cache: CacheClient = {
      get: async (name) => commands.get(name as string),
      set: async (name, value, options) => commands.set(name as string, value as string, options as Parameters<RedisClient['set']>[2]),
      del: async (keys) => commands.del(keys),
    };
    return { client, cache };
  };

  const connection = async (): Promise<Connection> => {
    if (closed) throw new Error('the idempotency guard is closed');
    const current = pending;
    if (current !== undefined) {
      const ready = await current.catch(() => undefined);
      if (ready?.client.isReady) return ready;
      // The connect failed or the server dropped the socket: the first caller to notice replaces it.
      if (pending === current) pending = undefined;
    }
    pending ??= open();
    return pending;
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
      if (first.client.isReady) throw error;
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
      const open = await pending?.catch(() => undefined);
      // destroy, not close: close waits for replies a hung server never sends. Every write the
      // guard made was awaited before its run returned, so nothing is cut short.
      if (open?.client.isOpen) open.client.destroy();
    },
  };
}

export { createRedisStore };
