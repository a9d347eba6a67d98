import type { RetryPolicy } from './retry-policy.js';

/**
 * Exponential backoff, pure. The delay before retry n (1-based) is
 * `initialDelayMs × multiplier^(n-1)`, capped at `maxDelayMs`, then spread by ± `jitter` (a fraction)
 * and capped again. With the defaults (1000 ms, ×2, cap 1 h, 5 retries, jitter 0.1):
 *
 * | retry | base delay | with jitter      |
 * |-------|-----------:|------------------|
 * | 1     |     1 000  |   900 –  1 100   |
 * | 2     |     2 000  | 1 800 –  2 200   |
 * | 3     |     4 000  | 3 600 –  4 400   |
 * | 4     |     8 000  | 7 200 –  8 800   |
 * | 5     |    16 000  | 14 400 – 17 600  |
 *
 * With `initialDelayMs` 60 000 the 7th retry would be 3 840 000 and is capped at 3 600 000.
 */
function baseDelayMs(retryNo: number, policy: RetryPolicy): number {
  const uncapped = policy.initialDelayMs * policy.multiplier ** (retryNo - 1);
  return Math.round(Math.min(uncapped, policy.maxDelayMs));
}

/**
 * The delay before retry `retryNo` with jitter applied. `random` returns a number in [0, 1); it is
 * passed in so that the function stays pure and tests can pin it.
 */
function backoffDelayMs(retryNo: number, policy: RetryPolicy, random: () => number): number {
  const base = baseDelayMs(retryNo, policy);
  const spread = base * policy.jitter * (2 * random() - 1);
  return Math.max(0, Math.round(Math.min(base + spread, policy.maxDelayMs)));
}

/**
 * Every distinct base delay the given policies can produce (retries 1..maxRetries), then tiers that
 * keep growing up to each policy's cap (the longest a Retry-After may ask for), ascending.
 * This bounds the number of delay queues in `tiers` mode by the policies, never by the delays asked.
 */
function tierDelaysMs(policies: readonly RetryPolicy[]): number[] {
  const delays = new Set<number>();
  for (const policy of policies) {
    for (let retryNo = 1; retryNo <= policy.maxRetries; retryNo++) {
      const delay = baseDelayMs(retryNo, policy);
      delays.add(delay);
      // Once capped, later retries repeat the cap: stop (a rule may allow thousands of retries).
      if (delay >= policy.maxDelayMs) break;
    }
    // A Retry-After may ask for more than the backoff ever waits, up to the cap: keep growing the
    // tiers (at least doubling) up to the cap, so such a request snaps up to a near tier instead of
    // coming back early. This adds about log2(cap / largest delay) queues, still bounded by the policy.
    if (policy.maxRetries > 0) {
      const factor = Math.max(policy.multiplier, 2);
      for (let delay = Math.max(1, ...delays) * factor; delay < policy.maxDelayMs; delay *= factor) delays.add(Math.round(delay));
      delays.add(policy.maxDelayMs);
    }
  }
  return [...delays].sort((a, b) => a - b);
}

export { backoffDelayMs, baseDelayMs, tierDelaysMs };
