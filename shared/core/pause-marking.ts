/**
 * The pause marker (amqp/pause-marker.ts) as every mode uses it: read once when an invocation starts,
 * written when a handler's answer starts or extends a pause. Neither may cost a message: a read that
 * fails counts as no pause, and a write that fails leaves the pause to this invocation alone (its
 * held messages are deferred all the same); each says so in a warning.
 */
import type { PauseMarker } from '../amqp/pause-marker.js';
import type { Logger } from '../observability/logger.js';
import type { Summary } from '../observability/summary.js';
import type { PauseStart } from './queue-pause.js';
import type { Tally } from './tally.js';

/**
 * Until when (epoch ms) the queue's marker says it is paused, or undefined: no marker, or it could
 * not be read (a warning says so).
 * @example const pausedUntil = await readPause(brokerPauseMarker(connection, config.workQueue), log);
 */
async function readPause(marker: PauseMarker, log: Logger): Promise<number | undefined> {
  try {
    return await marker.read();
  } catch (error) {
    log.warn('could not read the pause marker; taken as not paused', { markerQueue: marker.queue, reason: (error as Error).message });
    return undefined;
  }
}

/**
 * The summary of an invocation that found its queue paused and took nothing: `stoppedBecause: 'paused'`.
 * @example return pausedSummary(tally, pausedUntil, startedAt);
 */
function pausedSummary(tally: Tally, pausedUntil: number, startedAt: number): Summary {
  tally.paused(pausedUntil);
  tally.stop('paused');
  return tally.finish(startedAt);
}

/**
 * Writes the marker of each pause a handler's answer starts or extends, one write at a time per
 * invocation: handlers answered at once ask for several, and only the latest pause of each queue is
 * written after the one in flight.
 * @example
 * const marking = new PauseMarking((queue) => brokerPauseMarker(connection, queue), log, config.functionName);
 * const lifecycle = new Lifecycle({ ..., onPause: marking.started });
 * await marking.written(1000);
 */
class PauseMarking {
  private readonly pending = new Map<string, PauseStart>();
  private writing: Promise<void> | undefined;

  /** @param markerOf the marker of a queue (event mode: each record's queue) @param by the function's name */
  public constructor(
    private readonly markerOf: (queue: string) => PauseMarker,
    private readonly log: Logger,
    private readonly by: string,
  ) {}

  /** A pause started or grew: it is marked on the broker soon. */
  public readonly started = (pause: PauseStart): void => {
    this.pending.set(pause.queue, pause);
    this.writing ??= this.writeAll();
  };

  /** Waits for the writes asked for so far, at most `waitMs`; what is not written by then holds for this invocation only. */
  public async written(waitMs: number): Promise<void> {
    if (this.writing === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, waitMs));
    });
    await Promise.race([this.writing, waited]);
    clearTimeout(timer);
  }

  private async writeAll(): Promise<void> {
    for (let next = this.next(); next !== undefined; next = this.next()) {
      const marker = this.markerOf(next.queue);
      try {
        await marker.write({ untilMs: next.untilMs, reason: next.errorName, by: this.by });
      } catch (error) {
        this.log.warn('could not write the pause marker: the pause holds for this invocation only', {
          markerQueue: marker.queue,
          pausedUntil: new Date(next.untilMs).toISOString(),
          reason: (error as Error).message,
        });
      }
    }
    this.writing = undefined;
  }

  private next(): PauseStart | undefined {
    const [first] = this.pending.values();
    if (first !== undefined) this.pending.delete(first.queue);
    return first;
  }
}

export { PauseMarking, pausedSummary, readPause };
