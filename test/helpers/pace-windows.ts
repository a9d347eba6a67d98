/**
 * The most events in any window of `windowMs`, closed at both ends (the strictest reading of "no
 * second holds more than N"): for each event, those from it to `windowMs` later.
 * @example mostInWindow([0, 100, 1000, 1001], 1000) // 3
 */
function mostInWindow(times: readonly number[], windowMs = 1000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while ((sorted[i] as number) - (sorted[j] as number) > windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

export { mostInWindow };
