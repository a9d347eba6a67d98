/**
 * The store of a queue's rate limit: one token bucket per queue, shared by every invocation on it,
 * so that the limit holds across them exactly (docs/handlers.md, "Pacing a queue").
 */

/** A queue's bucket: may a handler start now, and if not, how long until one may. */
interface RateStore {
  /**
   * Takes one start from the bucket at `key` when the last one taken there is at least `intervalMs`
   * old by the store's clock, and answers 0; otherwise takes nothing and answers how many
   * milliseconds until a start is free. Nothing is reserved: the caller asks again when it is.
   */
  take(key: string, intervalMs: number): Promise<number>;
  /** Disconnects at once; a call after it fails. */
  close(): void;
}

/**
 * The bucket of one queue: its pull and event functions share it, and no other queue does.
 * @example rateKey('/', 'orders') // 'boomerang:rate:/:orders'
 */
function rateKey(vhost: string, workQueue: string): string {
  return `boomerang:rate:${vhost}:${workQueue}`;
}

export { rateKey };
export type { RateStore };
