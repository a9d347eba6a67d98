/**
 * The three moments of a pull invocation's budget, written once for both engines (pull/pull.ts,
 * native/native-pull.ts). The safety margin is kept inside the budget even when a caller passes a
 * tiny budget: at most half of it.
 */
type Deadlines = {
  /** Epoch ms: no message is taken, and no handler started, after it. */
  readonly stopTakingAt: number;
  /** Epoch ms: handlers still running are cut off. */
  readonly hardStopAt: number;
  /** Epoch ms: work still unconfirmed is given up, leaving room to close. */
  readonly settleBy: number;
};

/**
 * @example invocationDeadlines(1000, 10_000, 0) // { stopTakingAt: 9000, hardStopAt: 9500, settleBy: 9750 }
 */
function invocationDeadlines(safetyMarginMs: number, budgetMs: number, startedAt: number): Deadlines {
  const marginMs = Math.min(safetyMarginMs, budgetMs / 2);
  return {
    stopTakingAt: startedAt + budgetMs - marginMs,
    hardStopAt: startedAt + budgetMs - marginMs / 2,
    settleBy: startedAt + budgetMs - marginMs / 4,
  };
}

export { invocationDeadlines };
export type { Deadlines };
