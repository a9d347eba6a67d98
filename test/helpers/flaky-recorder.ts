import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import type { Handler } from '../../shared/message/message.js';

type FlakyRecorderOptions = {
  /**
   * Every attempt is appended here as one line, `F|S <id> <retryNo> <copyId> <pid> <epochMs>
   * <deliveryCount>`: F failed, S handled; copyId is the `boomerang-copy-id` of the copy delivered
   * (`-` for a message as first published), which tells a redelivery of the same message from a
   * second copy of it. The pid and the time say which process did it, and when: against a kill's
   * time, whether a repeated effect was inside the killed run's window. deliveryCount is the
   * delivery's `x-delivery-count` (`-` when the broker set none): on a native queue, its retries and
   * crashes together.
   */
  readonly recordFile: string;
  /** Percentage of attempts that throw, chosen per (seed, messageId, retryNo) so a rerun repeats it. */
  readonly failPercent: number;
  readonly seed: string;
  /** Simulated work per attempt. @default 0 */
  readonly workMs?: number;
};

/**
 * The handler of the fault scenarios: fails a fixed share of attempts (a plain retryable error) and
 * appends every attempt to a file with a synchronous write, so the line is on disk (in the page cache)
 * before the engine hears the outcome. A SIGKILL therefore never loses the record of a handled message:
 * the file is the ground truth of what was handled, and how often.
 */
function createFlakyRecorder(options: FlakyRecorderOptions): Handler {
  const workMs = options.workMs ?? 0;
  return async (message) => {
    const id = messageKey(message.properties.messageId, message.body);
    const copy = message.headers['boomerang-copy-id'];
    const copyId = typeof copy === 'string' ? copy : '-';
    const count = message.headers['x-delivery-count'];
    if (workMs > 0) await new Promise((resolve) => setTimeout(resolve, workMs));
    const line = `${id} ${message.retryNo} ${copyId} ${process.pid} ${Date.now()} ${typeof count === 'number' ? count : '-'}`;
    if (failsAt(options.seed, id, message.retryNo, options.failPercent)) {
      appendFileSync(options.recordFile, `F ${line}\n`);
      throw new Error(`flaky failure of ${id} at retry ${message.retryNo}`);
    }
    appendFileSync(options.recordFile, `S ${line}\n`);
  };
}

/** The message id, or for a message published without one, a digest of its body. */
function messageKey(messageId: string | undefined, body: Buffer): string {
  return messageId ?? `body-${createHash('sha1').update(body).digest('hex').slice(0, 12)}`;
}

/** Deterministic: the same seed, message and attempt always give the same answer. */
function failsAt(seed: string, id: string, retryNo: number, failPercent: number): boolean {
  const digest = createHash('sha1').update(`${seed}:${id}:${retryNo}`).digest();
  return digest.readUInt32BE(0) % 100 < failPercent;
}

/** The handler configured from FAULT_RECORD_FILE, FAULT_FAIL_PERCENT, FAULT_SEED, FAULT_WORK_MS. */
function flakyRecorderFromEnv(env: NodeJS.ProcessEnv = process.env): Handler {
  const recordFile = env.FAULT_RECORD_FILE;
  if (!recordFile) throw new Error('FAULT_RECORD_FILE must name the file that records every attempt');
  return createFlakyRecorder({
    recordFile,
    failPercent: Number(env.FAULT_FAIL_PERCENT ?? '70'),
    seed: env.FAULT_SEED ?? '0',
    workMs: Number(env.FAULT_WORK_MS ?? '0'),
  });
}

export { createFlakyRecorder, flakyRecorderFromEnv, messageKey };
