/**
 * Work in flight, counted: the pull loop waits for one piece to finish (at its concurrency limit) or
 * for all (at the end). It tracks two pieces per message, so it keeps a count and one reaction per
 * piece, not a Set of promises with a `finally` each (which allocates three promises a piece).
 * A piece that rejects counts as finished; whoever made it handles its error.
 */
class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  public get size(): number {
    return this.count;
  }

  public add(work: Promise<unknown>): void {
    this.count++;
    work.then(this.finished, this.finished);
  }

  /** Resolves when a piece finishes (at once when none is in flight), or when a signal given to `wakeOn` aborts. */
  public oneFinished(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * When `signal` aborts, the waits of `oneFinished` under way end (later ones wait for a piece again).
   * One listener for every wait: a loop at its limit waits once a message, and a listener added and
   * removed per wait (`unlessAborted`) showed in its CPU profile.
   */
  public wakeOn(signal: AbortSignal): void {
    signal.addEventListener('abort', this.wake, { once: true });
  }

  /** Resolves when nothing is in flight, including pieces added while it waits. */
  public async allFinished(): Promise<void> {
    while (this.count > 0) await this.oneFinished();
  }

  private readonly finished = (): void => {
    this.count--;
    this.wake();
  };

  private readonly wake = (): void => {
    if (this.waiters.length === 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  };
}

/**
 * `work`'s result, or undefined as soon as `signal` aborts, leaving no listener behind. (Racing with
 * a never-settling "broken" promise left a reaction on it per call, each keeping its delivery, body
 * included, alive until the invocation ended: 12 MB per 1 000 messages of 10 KB, measured.)
 */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Waits for everything in `work`, but never past `deadline` (epoch ms) nor after `signal` aborts. */
async function allFinishedBy(work: InFlight, deadline: number, signal: AbortSignal): Promise<void> {
  if (work.size === 0) return;
  const late = new AbortController();
  const timer = setTimeout(() => late.abort(), Math.max(0, deadline - Date.now()));
  await unlessAborted(work.allFinished(), AbortSignal.any([late.signal, signal]));
  clearTimeout(timer);
}

export { allFinishedBy, InFlight };
