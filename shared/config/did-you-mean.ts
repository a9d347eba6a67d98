/**
 * "Did you mean": the known word closest to a mistyped one (pure), for the errors about an unknown
 * command or flag of the CLI and an unknown option in code (`defineQueue`). Close means at most a third of the word's letters to change, insert,
 * delete or swap (one at least), or the one known word that starts with it.
 */

/**
 * The closest of `known` to `typed`, or undefined when none is close.
 * @example closestWord('functon', ['function', 'work-queue']) // 'function'
 */
function closestWord(typed: string, known: readonly string[]): string | undefined {
  const allowed = Math.max(1, Math.floor(typed.length / 3));
  let best: { word: string; distance: number } | undefined;
  for (const word of known) {
    const distance = editDistance(typed, word);
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { word, distance };
  }
  if (best !== undefined) return best.word;
  const started = typed.length >= 3 ? known.filter((word) => word.startsWith(typed)) : [];
  return started.length === 1 ? started[0] : undefined;
}

/**
 * The fewest one-letter changes, insertions, deletions and swaps of two neighbours from `a` to `b`
 * (the optimal string alignment distance: `hlep` is one swap from `help`).
 */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number): number => d[i]?.[j] as number;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** ` Did you mean X?`, or '' when nothing is close. */
function didYouMean(typed: string, known: readonly string[], spell: (word: string) => string = (word) => word): string {
  const closest = closestWord(typed, known);
  return closest === undefined ? '' : `; did you mean ${spell(closest)}?`;
}

/** ` (did you mean X?)`, or '' when nothing is close: for an error that goes on after it. */
function closestHint(typed: string, known: readonly string[]): string {
  const closest = closestWord(typed, known);
  return closest === undefined ? '' : ` (did you mean ${closest}?)`;
}

export { closestHint, closestWord, didYouMean, editDistance };
