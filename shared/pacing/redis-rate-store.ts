import type { Redis } from 'ioredis';
import { type RedisLogin, redisConnector } from '../idempotency/redis-connection.js';
import type { RateStore } from './rate-store.js';

/**
 * One start from a bucket, in one script so that no other client comes between the read and the
 * write (GCRA with no burst: the key holds the earliest time, in microseconds of the server's clock,
 * at which the next start may be taken). Every client reads the same clock, the server's, so the
 * functions' own clocks do not matter. The key expires a second after that time: an idle queue
 * leaves nothing behind.
 * KEYS[1]: the bucket; ARGV[1]: the interval between two starts, in whole microseconds.
 * Returns 0 (taken) or the milliseconds until a start is free (at least 1).
 */
const TAKE_START = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local interval = tonumber(ARGV[1])
local next_start = tonumber(redis.call('GET', KEYS[1]))
if next_start and next_start > now then
  return math.ceil((next_start - now) / 1000)
end
redis.call('SET', KEYS[1], string.format('%.0f', now + interval), 'PX', math.ceil(interval / 1000) + 1000)
return 0
`;

/** The script as ioredis defines it (EVALSHA, and EVAL when the server does not know it yet). */
type ScriptClient = Redis & { boomerangTakeStart(key: string, intervalUs: number): Promise<number> };

/**
 * A queue's bucket in Redis or Valkey, on the idempotency store's connection code (redis-connection.ts).
 * A command that met a dropped connection is tried once more: a start the first try took and never
 * answered is lost, which only slows.
 * @example const store = createRedisRateStore('redis://127.0.0.1:6379'); await store.take(rateKey('/', 'orders'), 50); // 0
 */
function createRedisRateStore(url: string, login?: RedisLogin): RateStore {
  const redis = redisConnector(
    url,
    login,
    {
      label: 'rate limit',
      closedMessage: "the rate limit's store is closed",
      loginHint:
        "give RATE_LIMIT_STORE the server's credentials, or use the idempotency store, whose password may come from a secret (IDEMPOTENCY_STORE_SECRET_ID)",
    },
    (client) => {
      client.defineCommand('boomerangTakeStart', { numberOfKeys: 1, lua: TAKE_START });
      return client as ScriptClient;
    },
  );
  return {
    take: (key, intervalMs) => redis.run((client) => client.boomerangTakeStart(key, Math.max(1, Math.round(intervalMs * 1000)))),
    close: () => redis.close(),
  };
}

export { createRedisRateStore };
