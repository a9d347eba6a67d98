/**
 * A live status line: rewritten in place on a terminal, printed as plain lines (at most one per
 * `plainEveryMs`) when stdout is a file or a pipe, so logs stay readable.
 */
class StatusLine {
  private lastPlainAt = 0;
  private shown = false;

  public constructor(
    private readonly out: NodeJS.WriteStream = process.stdout,
    private readonly plainEveryMs = 5000,
  ) {}

  public update(text: string): void {
    if (this.out.isTTY) {
      this.out.write(`\r\x1b[2K${text}`);
      this.shown = true;
      return;
    }
    const now = Date.now();
    if (now - this.lastPlainAt < this.plainEveryMs) return;
    this.lastPlainAt = now;
    this.out.write(`${text}\n`);
  }

  /** Ends the line so that what follows starts on its own. */
  public done(): void {
    if (this.shown) this.out.write('\n');
    this.shown = false;
  }
}

export { StatusLine };
