/**
 * What happened to each message after its handler succeeded, read from a kill scenario's record file
 * (`S|F <id> <retryNo> <copyId> <pid> <epochMs> <deliveryCount>` per attempt, `K <pid> <epochMs>` per kill, in the
 * order they happened: the children run one at a time and the drain after them).
 *
 * After a success, the one thing that may follow is the same success again: the same message (same
 * retry number) handled by a later process because the kill landed after the handler and before its
 * settlement reached the broker, so the message went back unsettled. That is told apart by the `K`
 * line: the earlier success's process must have been killed. Anything else after a success (a
 * retry, a failed attempt, a park for spent retries) means a handled message was retried, and a
 * repeat whose process was never killed means a settlement was lost without a crash.
 */

type Attempt = { readonly ok: boolean; readonly retryNo: number; readonly pid: string; readonly at: number; readonly deliveryCount: number };

type SuccessAudit = {
  /** Ids tried again after a success other than by a repeat of it (a retry, a failed attempt). */
  readonly retriedAfterSuccess: readonly string[];
  /** Ids parked after a success for any reason but a crash loop explained by a kill. */
  readonly parkedAfterSuccess: readonly string[];
  /** Repeated successes whose earlier success's process was then killed: allowed, and counted. */
  readonly repeatsAfterKill: number;
  /** Repeated successes whose earlier success's process was never killed. */
  readonly unexplainedRepeats: readonly string[];
  /** Handled messages parked as a crash loop because the kill took their settlement with it. */
  readonly crashLoopParksAfterKill: number;
  /** Longest time from an explained success (repeat or crash-loop park) to the kill of its process, in ms. */
  readonly maxSuccessToKillMs: number;
  /**
   * The most crashes an attempt saw its message take: `x-delivery-count` less the retry number (on a
   * native queue each retry is one failed settlement; crashes raise the count too). 0 without counts.
   */
  readonly mostCrashesSeen: number;
  /** Retries that took effect: the sum of every id's highest retry number attempted. */
  readonly retries: number;
};

/**
 * Audits every id's attempts in `records` (a record file's text) against the kills it lists and
 * `parkReasons` (id → the park reason of its parked copy).
 * @example auditSuccesses('S m 0 - 7 100\nK 7 105\nS m 0 - 8 300', new Map()).repeatsAfterKill // 1
 */
function auditSuccesses(records: string, parkReasons: ReadonlyMap<string, string>): SuccessAudit {
  const { attempts, kills } = parseLines(records);
  const retried: string[] = [];
  const parked: string[] = [];
  const unexplained: string[] = [];
  let repeatsAfterKill = 0;
  let crashLoopParksAfterKill = 0;
  let maxSuccessToKillMs = 0;
  let mostCrashesSeen = 0;
  let retries = 0;
  const killedAfter = (success: Attempt): boolean => {
    const killedAt = kills.get(success.pid);
    if (killedAt === undefined || killedAt < success.at) return false;
    maxSuccessToKillMs = Math.max(maxSuccessToKillMs, killedAt - success.at);
    return true;
  };
  for (const [id, tries] of attempts) {
    let success: Attempt | undefined;
    retries += Math.max(...tries.map((attempt) => attempt.retryNo));
    for (const attempt of tries) {
      if (Number.isFinite(attempt.deliveryCount)) mostCrashesSeen = Math.max(mostCrashesSeen, attempt.deliveryCount - attempt.retryNo);
      if (success === undefined) {
        if (attempt.ok) success = attempt;
        continue;
      }
      if (!attempt.ok || attempt.retryNo !== success.retryNo) {
        retried.push(id);
        break;
      }
      if (killedAfter(success)) repeatsAfterKill++;
      else unexplained.push(id);
      success = attempt;
    }
    const reason = parkReasons.get(id);
    if (success === undefined || reason === undefined || retried.at(-1) === id) continue;
    if (reason.startsWith('crash loop') && killedAfter(success)) crashLoopParksAfterKill++;
    else parked.push(id);
  }
  return {
    retriedAfterSuccess: retried,
    parkedAfterSuccess: parked,
    repeatsAfterKill,
    unexplainedRepeats: unexplained,
    crashLoopParksAfterKill,
    maxSuccessToKillMs,
    mostCrashesSeen,
    retries,
  };
}

function parseLines(text: string): { attempts: Map<string, Attempt[]>; kills: Map<string, number> } {
  const attempts = new Map<string, Attempt[]>();
  const kills = new Map<string, number>();
  for (const line of text.split('\n')) {
    const parts = line.split(' ');
    if (parts[0] === 'K') {
      kills.set(parts[1] ?? '', Number(parts[2]));
    } else if (parts[0] === 'S' || parts[0] === 'F') {
      const [kind, id = '', retryNo, , pid = '', at, deliveryCount] = parts;
      const tries = attempts.get(id) ?? [];
      tries.push({ ok: kind === 'S', retryNo: Number(retryNo), pid, at: Number(at), deliveryCount: Number(deliveryCount) });
      attempts.set(id, tries);
    }
  }
  return { attempts, kills };
}

export { auditSuccesses };
export type { SuccessAudit };
