/** Errors that mean the reader of a pipe went away (`| head`, `| jq` that stopped on a parse error, `| true`). */
const CLOSED_PIPE_CODES: ReadonlySet<string> = new Set(['EPIPE', 'ERR_STREAM_DESTROYED']);

function isClosedPipe(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && CLOSED_PIPE_CODES.has(code);
}

const guards = new WeakMap<NodeJS.WritableStream, GuardedOutput>();

/**
 * An output stream whose reader may go away. Once it has, writes are dropped instead of crashing the
 * process: an unhandled `EPIPE` ended a parking-lot walk before its last acks, and the broker gave
 * back messages whose copies were already at the tail (measured: a lot of 300 became 335). Any other
 * stream error still crashes, as it would without the guard.
 */
class GuardedOutput {
  private closedPipe = false;
  private readonly onCloseListeners: (() => void)[] = [];

  private constructor(private readonly stream: NodeJS.WritableStream) {
    stream.on('error', (error: unknown) => {
      if (!isClosedPipe(error)) throw error;
      if (this.closedPipe) return;
      this.closedPipe = true;
      for (const listener of this.onCloseListeners) listener();
    });
  }

  /** The guard of `stream`: one per stream, so every writer sees the same state. */
  public static of(stream: NodeJS.WritableStream): GuardedOutput {
    let guard = guards.get(stream);
    if (guard === undefined) {
      guard = new GuardedOutput(stream);
      guards.set(stream, guard);
    }
    return guard;
  }

  /** The reader went away: nothing written now reaches anyone. */
  public get closed(): boolean {
    return this.closedPipe;
  }

  public write(text: string): void {
    if (!this.closedPipe) this.stream.write(text);
  }

  /** Called once, when the reader goes away. */
  public onClose(listener: () => void): void {
    this.onCloseListeners.push(listener);
  }
}

export { GuardedOutput, isClosedPipe };
