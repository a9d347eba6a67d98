/**
 * One walk at a time per parking lot: two walks at once would mix up its order (and the second
 * would fail with `ParkingLotBusyError`), so the console queues them.
 */
class QueueLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  public run<T>(queue: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(queue) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    const tail = next.catch(() => undefined);
    this.tails.set(queue, tail);
    void tail.then(() => {
      if (this.tails.get(queue) === tail) this.tails.delete(queue);
    });
    return next;
  }
}

export { QueueLock };
