/**
 * Reads V8's `--trace-gc-nvp` output (one line per collection): the bench gives each contestant's
 * bytes promoted per message from it, and the work-in-hand test the bytes a churn run promoted.
 */

/** The bytes the scavenges (`gc=s` lines) in `traceLines` promoted to the old generation. */
function promotedBytes(traceLines: Iterable<string>): number {
  let bytes = 0;
  for (const line of traceLines) {
    const promoted = / gc=s .* promoted=(\d+) /.exec(line)?.[1];
    if (promoted !== undefined) bytes += Number(promoted);
  }
  return bytes;
}

/**
 * A contestant's stdout split into its result (the last line that is a JSON object) and the trace's
 * lines. The result is not always the last line: with `--cpu-prof`, V8 collects again while it writes
 * the profile at exit, after the result.
 * @example resultAndTrace('[1] gc=s promoted=8 \n{"ms":5}\n[1] gc=s promoted=0 ').result // '{"ms":5}'
 */
function resultAndTrace(stdout: string): { result: string | undefined; traceLines: string[] } {
  const lines = stdout.trim().split('\n');
  const at = lines.findLastIndex((line) => line.startsWith('{'));
  if (at < 0) return { result: undefined, traceLines: lines };
  return { result: lines[at], traceLines: [...lines.slice(0, at), ...lines.slice(at + 1)] };
}

export { promotedBytes, resultAndTrace };
