import type { CacheClient } from '@aws-lambda-powertools/idempotency/cache/types';
import type { Redis } from 'ioredis';

/** A claim waiting for the end of the turn: one SET NX of a run's in-progress record. */
type PendingClaim = {
  readonly name: string;
  readonly value: string;
  readonly expireSeconds: number;
  readonly resolve: (reply: string | null) => void;
  readonly reject: (error: unknown) => void;
};

/**
 * Powertools' three commands on one ioredis client; Powertools only ever passes string keys and values.
 *
 * The claims (SET NX, a run's in-progress record) made in one turn of the event loop go out in one
 * write, as a pipeline: the runs that start together (a batch arriving, the next runs after the
 * replies that ended the last ones) then cost the process and the server one write and one read,
 * not one each; on a small machine shared with the broker those system calls were most of the
 * guard's cost. A claim comes before the handler's effect, so holding it to the end of the turn
 * widens no window. Every other command goes out in the call that sends it: above all the completed
 * write, which must leave the process as soon as the run returns (a kill in between repeats the effect).
 * @example const cache = cacheClient(new Redis('redis://127.0.0.1:6379'));
 */
function cacheClient(client: Redis): CacheClient {
  let claims: PendingClaim[] = [];

  const sendClaims = (): void => {
    const batch = claims;
    claims = [];
    if (batch.length === 1) {
      const [claim] = batch as [PendingClaim];
      client.set(claim.name, claim.value, 'EX', claim.expireSeconds, 'NX').then(claim.resolve, claim.reject);
      return;
    }
    const pipeline = client.pipeline();
    for (const claim of batch) pipeline.set(claim.name, claim.value, 'EX', claim.expireSeconds, 'NX');
    pipeline.exec().then(
      (replies) => {
        batch.forEach((claim, i) => {
          const [error, reply] = replies?.[i] ?? [new Error('no reply to the pipelined SET')];
          if (error) claim.reject(error);
          else claim.resolve(reply as string | null);
        });
      },
      (error: unknown) => {
        for (const claim of batch) claim.reject(error);
      },
    );
  };

  return {
    get: async (name) => client.get(name),
    set: async (name, value, options) => {
      const { expireSeconds, onlyIfAbsent } = redisSetOptions(options);
      if (!onlyIfAbsent) return client.set(name as string, value as string, 'EX', expireSeconds);
      return new Promise<string | null>((resolve, reject) => {
        // nextTick runs once the current chain of promise reactions is done: every claim this turn has made.
        if (claims.push({ name: name as string, value: value as string, expireSeconds, resolve, reject }) === 1) process.nextTick(sendClaims);
      });
    },
    del: async (keys) => client.del(...keys),
  };
}

/** A SET as Powertools' cache layer asks for it, in the words of ioredis's `set(key, value, 'EX', n, 'NX')`. */
type RedisSetOptions = {
  /** The record's time to live, in seconds (`EX`). */
  readonly expireSeconds: number;
  /** Write only when the key does not exist (`NX`): how a run claims a key. */
  readonly onlyIfAbsent: boolean;
};

/**
 * Reads the options Powertools' CachePersistenceLayer passes to `set` (node-redis's shape:
 * `{ EX: 3600 }` or `{ EX: 3600, NX: true }`). Anything else throws rather than being dropped: a
 * later Powertools asking for another option would otherwise get a write that means something else.
 * @example redisSetOptions({ EX: 3600, NX: true }) // { expireSeconds: 3600, onlyIfAbsent: true }
 */
function redisSetOptions(options: unknown): RedisSetOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError(`Expected the SET options to be an object with \`EX\`, got ${String(options)}`);
  const { EX, NX, ...others } = options as Record<string, unknown>;
  const unknown = Object.keys(others);
  if (unknown.length > 0) throw new TypeError(`Expected only \`EX\` and \`NX\` in the SET options, got \`${unknown.join('`, `')}\``);
  if (typeof EX !== 'number' || !Number.isInteger(EX)) throw new TypeError(`Expected \`EX\` to be an integer number of seconds, got ${String(EX)}`);
  if (NX !== undefined && typeof NX !== 'boolean') throw new TypeError(`Expected \`NX\` to be a boolean, got ${String(NX)}`);
  return { expireSeconds: EX, onlyIfAbsent: NX === true };
}

export { cacheClient, redisSetOptions };
