/**
 * A token bucket (pure: the caller passes the clock and does the waiting). It refills at
 * `ratePerSecond` up to `burst` tokens; each `take` spends one, and when none is left it reserves
 * the next one and says how long to wait for it. With 10/s and a burst of 1 the takes are spaced
 * 100 ms apart:
 *
 * | take at (ms) | 0 | 0   | 0   | 350 | 360 |
 * |--------------|---|-----|-----|-----|-----|
 * | wait (ms)    | 0 | 100 | 200 | 0   | 90  |
 */
class TokenBucket {
  private tokens: number;
  private updatedAtMs: number;

  public constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    nowMs: number,
  ) {
    if (!(ratePerSecond > 0) || !Number.isFinite(ratePerSecond))
      throw new RangeError(`Expected \`ratePerSecond\` to be a positive number, got ${ratePerSecond}`);
    if (!(burst >= 1)) throw new RangeError(`Expected \`burst\` to be at least 1, got ${burst}`);
    this.tokens = burst;
    this.updatedAtMs = nowMs;
  }

  /** Spends a token; returns the milliseconds to wait before acting on it (0: act now). */
  public take(nowMs: number): number {
    const elapsedMs = Math.max(0, nowMs - this.updatedAtMs);
    this.tokens = Math.min(this.burst, this.tokens + (elapsedMs * this.ratePerSecond) / 1000);
    this.updatedAtMs = Math.max(this.updatedAtMs, nowMs);
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / this.ratePerSecond);
  }
}

/**
 * Parses `--rate`: `50`, `50/s`, `300/m` or `0.5/s`, as messages per second; undefined when invalid.
 * @example parseRatePerSecond('300/m') // 5
 */
function parseRatePerSecond(text: string): number | undefined {
  const match = /^(\d{1,7}(?:\.\d{1,3})?)(?:\/(s|m|h))?$/.exec(text.trim());
  if (!match) return undefined;
  const perUnit = { s: 1, m: 60, h: 3600 }[(match[2] ?? 's') as 's' | 'm' | 'h'];
  const rate = Number(match[1]) / perUnit;
  return rate > 0 ? rate : undefined;
}

export { parseRatePerSecond, TokenBucket };
