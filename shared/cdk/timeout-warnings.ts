import type { Mode } from '../queues/deploy-options.js';
import type { DeployedQueue } from './deployed-queue.js';

/** A synth warning about one deployed function. */
type TimeoutWarning = { readonly queue: string; readonly mode: Mode; readonly message: string };

/**
 * The functions whose timeout leaves a partner call less time than HTTP_TIMEOUT_MS, or an attempt
 * less than the `attemptTimeoutMs` the queue sets (pure). An invocation
 * stops handing out messages SAFETY_MARGIN_MS before its end and aborts the handlers still running, so a
 * call has at most timeout − margin: with less than HTTP_TIMEOUT_MS left, a slow partner is cut off by the
 * function, not by HTTP_TIMEOUT_MS, and its message retried again and again.
 * @example timeoutWarnings(queue) // [{ queue: 'webhooks', mode: 'pull', message: 'webhooks pull function: HTTP_TIMEOUT_MS (10000) + ...' }]
 */
function timeoutWarnings(queue: Pick<DeployedQueue, 'name' | 'file' | 'deploy' | 'timings'>): TimeoutWarning[] {
  const { httpTimeoutMs, safetyMarginMs, attemptTimeoutMs } = queue.timings;
  const neededMs = httpTimeoutMs + safetyMarginMs;
  return queue.deploy.modes.flatMap((mode) => {
    const timeoutSeconds = queue.deploy[mode].timeoutSeconds;
    const key = `deploy.${mode}.timeoutSeconds`;
    const attemptNeedsMs = attemptTimeoutMs === undefined ? 0 : attemptTimeoutMs + safetyMarginMs;
    const attempt: TimeoutWarning[] =
      attemptNeedsMs <= timeoutSeconds * 1000
        ? []
        : [
            {
              queue: queue.name,
              mode,
              message:
                `${queue.name} ${mode} function: attemptTimeoutMs (${attemptTimeoutMs}) + SAFETY_MARGIN_MS (${safetyMarginMs}) = ${attemptNeedsMs} ms exceeds its timeout, ${key}=${timeoutSeconds} s: ` +
                `an attempt is cut off by the invocation's end after ${timeoutSeconds * 1000 - safetyMarginMs} ms at most, before its own limit. ` +
                `Raise ${key} in ${queue.file} to at least ${Math.ceil(attemptNeedsMs / 1000)}, or lower attemptTimeoutMs.`,
            },
          ];
    if (neededMs <= timeoutSeconds * 1000) return attempt;
    return [
      ...attempt,
      {
        queue: queue.name,
        mode,
        message:
          `${queue.name} ${mode} function: HTTP_TIMEOUT_MS (${httpTimeoutMs}) + SAFETY_MARGIN_MS (${safetyMarginMs}) = ${neededMs} ms exceeds its timeout, ${key}=${timeoutSeconds} s: ` +
          `a partner call is aborted after ${timeoutSeconds * 1000 - safetyMarginMs} ms at most, before HTTP_TIMEOUT_MS, and its message retried. ` +
          `Raise ${key} in ${queue.file} to at least ${Math.ceil(neededMs / 1000)}, or lower HTTP_TIMEOUT_MS or SAFETY_MARGIN_MS in functionEnvironment.`,
      },
    ];
  });
}

export { timeoutWarnings };
