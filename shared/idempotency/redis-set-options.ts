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

export { redisSetOptions };
