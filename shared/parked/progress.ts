import { MultiBar, Presets, type SingleBar } from 'cli-progress';
import { GuardedOutput } from '../observability/guarded-output.js';
import type { WalkCounts } from './walk.js';

/** Reports a walk as it goes, and prints result lines (table rows) without breaking the report. */
interface Progress {
  update(counts: Readonly<WalkCounts>): void;
  /** A result line for stdout. */
  print(line: string): void;
  /** Ends the report with the final counts. */
  stop(counts: Readonly<WalkCounts>): void;
}

/** Options of {@link createProgress}. */
type ProgressOptions = {
  /** `list`, `replay`... at the start of each report. */
  readonly label: string;
  /** The command's own counts, such as `12 replayed · 3 kept`. */
  readonly details: (counts: Readonly<WalkCounts>) => string;
  /** @default process.stderr */
  readonly stderr?: NodeJS.WriteStream;
  /** @default process.stdout */
  readonly stdout?: NodeJS.WriteStream;
  /** Plain reports: at most one line this often. @default 2000 */
  readonly plainEveryMs?: number;
};

function rate(counts: Readonly<WalkCounts>, startedAt: number): number {
  const seconds = (Date.now() - startedAt) / 1000;
  return seconds > 0 ? Math.round(counts.visited / seconds) : 0;
}

/**
 * A progress bar with counts and rate when stderr is a terminal (rows go above it), plain lines on
 * stderr every couple of seconds otherwise; result lines always reach stdout's reader in order.
 * A reader that goes away (`| head`) stops what reaches it, never the walk: see {@link GuardedOutput}.
 */
function createProgress(options: ProgressOptions): Progress {
  const stderr = options.stderr ?? process.stderr;
  const errors = GuardedOutput.of(stderr);
  const stdoutStream = options.stdout ?? process.stdout;
  const stdout = GuardedOutput.of(stdoutStream);
  const startedAt = Date.now();
  const summary = (counts: Readonly<WalkCounts>): string =>
    `${options.label}: ${counts.visited}/${counts.total} read · ${options.details(counts)} · ${rate(counts, startedAt)} msg/s`;
  if (!stderr.isTTY) return plainProgress(options, stdout, errors, summary);
  const bars = new MultiBar(
    {
      stream: stderr,
      format: `${options.label} [{bar}] {value}/{total} read | {rate} msg/s | {details}`,
      hideCursor: true,
      // The final report line says it all once the walk is over.
      clearOnComplete: true,
      // Ctrl-C is the command's to handle: it finishes the message in hand before stopping.
      gracefulExit: false,
    },
    Presets.shades_classic,
  );
  let bar: SingleBar | undefined;
  let stopped = false;
  return {
    update(counts) {
      if (stopped) return;
      bar ??= bars.create(counts.total, 0, { rate: 0, details: '' });
      bar.update(counts.visited, { rate: rate(counts, startedAt), details: options.details(counts) });
    },
    print(line) {
      // Both on the terminal: the row goes above the bar. Piped stdout gets the rows as they are.
      if (stdoutStream.isTTY && bar !== undefined && !stopped) bars.log(`${line}\n`);
      else stdout.write(`${line}\n`);
    },
    stop(counts) {
      if (stopped) return;
      if (bar !== undefined) {
        this.update(counts);
        bars.stop();
      }
      stopped = true;
      errors.write(`${summary(counts)}\n`);
    },
  };
}

function plainProgress(options: ProgressOptions, stdout: GuardedOutput, stderr: GuardedOutput, summary: (counts: Readonly<WalkCounts>) => string): Progress {
  const everyMs = options.plainEveryMs ?? 2000;
  let lastAt = Date.now();
  return {
    update(counts) {
      if (Date.now() - lastAt < everyMs) return;
      lastAt = Date.now();
      stderr.write(`${summary(counts)}\n`);
    },
    print: (line) => stdout.write(`${line}\n`),
    stop: (counts) => stderr.write(`${summary(counts)}\n`),
  };
}

export { createProgress };
export type { Progress };
