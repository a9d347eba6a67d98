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

export { promotedBytes };
