/** Small statistics for the bench: medians of repeated runs, percentiles of latencies. */

function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

/** The nearest-rank percentile of an ascending array (0 when empty). */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[rank] as number;
}

type Spread = { readonly p50: number; readonly p99: number; readonly max: number; readonly min: number; readonly count: number };

function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1] ?? 0, min: sorted[0] ?? 0, count: sorted.length };
}

export { median, percentile, spread };
export type { Spread };
