/** Durations as people write them in options and flags (`retention: { olderThan: '7d' }`, `--older-than 2h`). */
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses a duration such as `500ms`, `90s`, `15m`, `2h` or `7d`; undefined when it is not one.
 * @example parseDurationMs('2h') // 7200000
 */
function parseDurationMs(text: string): number | undefined {
  const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(text.trim());
  return match ? Number(match[1]) * (UNIT_MS[match[2] as string] as number) : undefined;
}

export { parseDurationMs };
